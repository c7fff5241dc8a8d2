"""A function's logs in Kubernetes mode: the tail of its pods' output, newest pods first.

Each pod's part ends with the platform's lines (``[sless] ...``) for its containers that
ended (now, or before their last restart): an ``OOMKilled`` container reads
``worker killed: out of memory (128 MiB limit)``, as in embedded mode
(``sless.models.endings``), where a pod's own output never says it.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sless.errors import BackendUnavailable, Invalid, NotFound
from sless.kube import Forbidden, KubeApi
from sless.models import endings
from sless.policies import labels

_MEMORY = re.compile(r"^(\d+)(Mi|Gi)$")

#: at most this many pods' logs in one answer
_LOG_PODS = 5


async def pod_logs(
    api: KubeApi, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
) -> str:
    """The tail of the function's pods' output, newest pods first; with ``since`` (epoch
    seconds), what each pod wrote at or after it (the kubelet's ``sinceSeconds``).

    Needs ``list pods`` and ``get pods/log`` in tenant namespaces; without them (or
    with no pod running) the answer says so instead of failing.
    """
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.function_selector(name).items()))
    try:
        pods = await api.request(
            "GET", f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": selector}
        )
    except Forbidden:
        return "[logs are not available: the gateway may not read pods in this cluster]\n"
    items = sorted(
        pods.get("items") or [],
        key=lambda p: str((p.get("metadata") or {}).get("creationTimestamp") or ""),
        reverse=True,
    )[:_LOG_PODS]
    if not items:
        return f"[no running instances of {name!r}]\n"
    per_pod = max(1024, tail_bytes // len(items))
    parts = []
    for pod in items:
        pod_name = str((pod.get("metadata") or {}).get("name", ""))
        params = {"tailLines": str(min(10000, max(100, per_pod // 40)))}
        if since is not None:
            params["sinceSeconds"] = str(max(1, math.ceil(time.time() - since)))
        try:
            text = await api.request_text(
                "GET", f"/api/v1/namespaces/{namespace}/pods/{pod_name}/log", params=params
            )
        except (Invalid, NotFound, Forbidden) as e:
            # not started yet (400 "ContainerCreating"), gone meanwhile, or not allowed
            text = f"[no logs: {e.message}]\n"
        parts.append(f"==> {pod_name} <==\n{text[-per_pod:]}{ended_lines(pod)}")
    return "\n".join(parts)[-tail_bytes:]


def ended_lines(pod: dict[str, Any]) -> str:
    """The platform's lines for the pod's containers that ended (their current state or
    the one before their last restart); empty when none did."""
    limits = {
        str(c.get("name")): _memory_mb(c) for c in (pod.get("spec") or {}).get("containers") or []
    }
    lines = []
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        for state in (status.get("lastState"), status.get("state")):
            terminated = (state or {}).get("terminated")
            if not isinstance(terminated, dict):
                continue
            ending = container_ending(terminated, limits.get(str(status.get("name"))))
            if ending is not None:
                lines.append(endings.log_line(endings.worker_ended(ending)))
    return "".join(lines)


def container_ending(terminated: dict[str, Any], memory_mb: int | None) -> endings.Ending | None:
    """A container's ``terminated`` state as an ``Ending``; None for a clean exit (0)."""
    code = terminated.get("exitCode")
    oom = terminated.get("reason") == "OOMKilled"
    if not isinstance(code, int) or (code == 0 and not oom):
        return None
    # container runtimes report a death by signal N as 128 + N, as bubblewrap does
    status, killed = endings.of_wait_status(code, sandboxed=True)
    if isinstance(terminated.get("signal"), int) and terminated["signal"] > 0:
        status, killed = None, int(terminated["signal"])
    return endings.Ending(status=status, signal=killed, oom_killed=oom, memory_mb=memory_mb)


def _memory_mb(container: dict[str, Any]) -> int | None:
    limit = str(((container.get("resources") or {}).get("limits") or {}).get("memory", ""))
    found = _MEMORY.match(limit)
    if found is None:
        return None
    return int(found[1]) * (1024 if found[2] == "Gi" else 1)


#: how long after a broken call the kubelet's report of the container's end is awaited
_ENDING_WAIT_S = 10.0
#: a termination this much older than the broken call is an earlier one, not this call's
_ENDING_SLACK_S = 5.0


async def pod_ending(
    api: KubeApi, namespace: str, base_url: str, *, since: float, wait_s: float = _ENDING_WAIT_S
) -> endings.Ending | None:
    """How the function container of the pod at ``base_url`` (``http://IP:port``) ended,
    once the kubelet reports it (its state, or the state before its restart), for a call
    that broke at ``since`` (epoch seconds); None when nothing ended then (or pods may not
    be read). A pod OOMKilled mid-call so reads ``worker killed: out of memory (128 MiB
    limit)`` to its caller, as in embedded mode."""
    ip = urlsplit(base_url).hostname
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pods = await api.request(
                "GET",
                f"/api/v1/namespaces/{namespace}/pods",
                params={"fieldSelector": f"status.podIP={ip}"},
            )
        except (Forbidden, NotFound, Invalid, BackendUnavailable):
            return None
        for pod in pods.get("items") or []:
            found = _recent_ending(pod, since - _ENDING_SLACK_S)
            if found is not None:
                return found
        if time.monotonic() >= deadline:
            return None
        await asyncio.sleep(0.5)


def _recent_ending(pod: dict[str, Any], after: float) -> endings.Ending | None:
    limits = {
        str(c.get("name")): _memory_mb(c) for c in (pod.get("spec") or {}).get("containers") or []
    }
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        for state in (status.get("state"), status.get("lastState")):
            terminated = (state or {}).get("terminated")
            if not isinstance(terminated, dict) or _epoch(terminated.get("finishedAt")) < after:
                continue
            ending = container_ending(terminated, limits.get(str(status.get("name"))))
            if ending is not None:
                return ending
    return None


def _epoch(stamp: object) -> float:
    """An RFC 3339 time of the API (``2026-12-06T00:41:02Z``) in epoch seconds; 0 if none."""
    if not isinstance(stamp, str):
        return 0.0
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0

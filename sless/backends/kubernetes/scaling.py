"""Autoscaling in Kubernetes mode: the gateway sets each function Deployment's replicas
from the calls in flight, as Knative's KPA does (docs/kubernetes.md says why not an HPA).

The gateway sees every call, so it counts them: ``enter``/``leave`` around each one (two
dict operations on the hot path). Every ``autoscale_interval_s`` a tick:

1. takes each function's peak of calls in flight since the last tick into a window of
   ``scale_down_delay_s``; this gateway's **demand** for the function is the highest peak
   in the window (so a burst scales up at the next tick, and the function scales down only
   after demand stayed low for the whole window);
2. publishes this gateway's demands in a Lease of its own (``sless-demand-<identity>`` in
   the gateway namespace; one write per tick at most, only when something changed or the
   Lease is due for renewal), and reads the other gateways' Leases: replicas of the
   gateway each see part of the traffic, and the decision uses the sum of fresh demands;
3. for each function with demand (or whose demand just ended), decides
   ``ceil(demand / concurrency)`` within ``[max(1, min_instances), max_instances]`` (the
   upper bound also capped by the tenant's ``max_instances`` quota) and writes it to the
   Deployment's ``scale`` subresource when it differs from what is there.

Nothing scales from zero: the operator keeps at least one pod (a function whose http
triggers are all disabled stays at 0, and is left alone here). The scale subresource is
the only thing of a Deployment the gateway may change (deploy/rbac/gateway.yaml): it can
set a replica count, never a pod template.

Calls beyond ``max_instances * concurrency`` wait up to ``queue_timeout_s`` for one to
end, then get 429 with ``Retry-After``. Each gateway admits its share of that capacity:
``ceil(capacity / gateways)``, where ``gateways`` is how many fresh demand Leases it saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sless.config import Settings
from sless.errors import SlessError, TooManyRequests
from sless.kube import KubeApi, collection_path, object_path
from sless.models import FunctionSpec
from sless.policies import labels

log = logging.getLogger(__name__)

Key = tuple[str, str]

#: the Lease annotation holding one gateway's demands: ``{"namespace/name": calls}``
DEMAND_ANNOTATION = "sless.kube5s.ru/demand"
#: the label every demand Lease carries (what a gateway lists)
DEMAND_LABEL = "sless.kube5s.ru/gateway-demand"
#: at most this many functions in one gateway's Lease (an annotation holds 256 KiB)
MAX_PUBLISHED = 2000


def gateway_identity(configured: str | None) -> str:
    """This gateway's name in its demand Lease: ``configured``, else the host name (a
    pod's name), as a DNS-1123 label of at most 50 characters."""
    raw = (configured or socket.gethostname() or "gateway").lower()
    name = re.sub(r"[^a-z0-9-]+", "-", raw).strip("-")[:50].strip("-")
    return name or "gateway"


def desired_replicas(demand: float, concurrency: int, lower: int, upper: int) -> int:
    """``ceil(demand / concurrency)`` instances, within ``[lower, upper]`` (pure)."""
    wanted = math.ceil(demand / max(1, concurrency)) if demand > 0 else 0
    return max(lower, min(upper, wanted))


def bounds(spec: FunctionSpec, quota: int) -> tuple[int, int]:
    """``(lower, upper)`` replicas of a serving function: at least one pod (nothing scales
    a Deployment up from zero here), at most ``max_instances`` within the quota."""
    lower = max(1, spec.min_instances)
    return lower, max(lower, min(spec.max_instances, quota))


@dataclass
class _Load:
    inflight: int = 0
    #: highest in flight (and waiting for room) since the last tick
    peak: int = 0
    #: calls waiting for room now
    waiting: int = 0
    #: (monotonic time, peak) of past ticks within the scale-down window
    samples: deque[tuple[float, int]] = field(default_factory=deque)
    #: woken when a call ends, for calls waiting for room (created on first use)
    room: asyncio.Condition | None = None

    def demand(self) -> int:
        return max([self.inflight, *(peak for _, peak in self.samples)])


def _micro_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return None


class Autoscaler:
    """The calls in flight of every function this gateway serves, and the loop that turns
    them into replica counts."""

    def __init__(
        self,
        api: KubeApi,
        settings: Settings,
        *,
        identity: str,
        serving: Callable[[str, str], FunctionSpec | None],
        disabled: Callable[[str, str], bool],
    ) -> None:
        self.api = api
        self.settings = settings
        self.identity = identity
        self._serving = serving
        self._disabled = disabled
        self._loads: dict[Key, _Load] = {}
        #: what each Deployment's scale said at the last tick (for metrics: the replicas)
        self.replicas: dict[Key, int] = {}
        #: how many gateways published demand recently (this one included)
        self.gateways = 1
        self._published: dict[str, int] | None = None
        self._published_at = 0.0
        #: functions whose last published demand was not zero: one more decision is due
        self._active: set[Key] = set()
        self._lease_warned = False
        #: counters for tests and metrics
        self.decisions = 0
        self.throttled = 0

    # -- the hot path ------------------------------------------------------------------

    async def enter(self, namespace: str, name: str, spec: FunctionSpec) -> None:
        """Count one call, waiting up to ``queue_timeout_s`` while the function has this
        gateway's share of ``max_instances * concurrency`` calls in flight."""
        key = (namespace, name)
        load = self._loads.get(key)
        if load is None:
            load = self._loads[key] = _Load()
        _, upper = bounds(spec, self.settings.limits.max_instances)
        capacity = math.ceil(upper * spec.concurrency / max(1, self.gateways))
        if load.inflight >= capacity:
            await self._wait_for_room(load, capacity, name)
        load.inflight += 1
        load.peak = max(load.peak, load.inflight)

    async def _wait_for_room(self, load: _Load, capacity: int, name: str) -> None:
        timeout = self.settings.gateway.queue_timeout_s
        if load.room is None:
            load.room = asyncio.Condition()
        # a call that waits is demand too: the next tick scales up for it
        load.waiting += 1
        load.peak = max(load.peak, load.inflight + load.waiting)
        room = load.room
        try:
            async with asyncio.timeout(timeout), room:
                await room.wait_for(lambda: load.inflight < capacity)
        except TimeoutError:
            self.throttled += 1
            raise TooManyRequests(
                f"function {name!r} is at its max_instances and no instance was free "
                f"within {timeout:g}s",
                retry_after=1,
            ) from None
        finally:
            load.waiting -= 1

    async def leave(self, namespace: str, name: str) -> None:
        load = self._loads.get((namespace, name))
        if load is None:
            return
        load.inflight -= 1
        if load.room is not None:
            async with load.room:
                load.room.notify(1)

    def inflight(self, namespace: str, name: str) -> int:
        load = self._loads.get((namespace, name))
        return load.inflight if load is not None else 0

    # -- the loop ----------------------------------------------------------------------

    async def run(self) -> None:
        interval = self.settings.kubernetes.autoscale_interval_s
        while True:
            await asyncio.sleep(interval)
            try:
                await self.tick()
            except SlessError as e:
                log.warning("autoscaling tick failed, will retry: %s", e)
            except Exception:
                log.exception("autoscaling tick failed")

    def _window(self, now: float) -> dict[Key, int]:
        """Fold each function's peak into its window; this gateway's demands."""
        window = self.settings.kubernetes.scale_down_delay_s
        demands: dict[Key, int] = {}
        for key, load in list(self._loads.items()):
            load.samples.append((now, load.peak))
            load.peak = load.inflight
            while load.samples and load.samples[0][0] < now - window:
                load.samples.popleft()
            demand = load.demand()
            if demand > 0:
                demands[key] = demand
            else:
                del self._loads[key]  # nothing in flight, nothing in the window
        return demands

    async def tick(self) -> dict[Key, int]:
        """One decision round; returns the replicas written, by function."""
        demands = self._window(time.monotonic())
        totals = dict(demands)
        try:
            await self._publish(demands)
            others = await self._other_leases()
        except SlessError as e:
            # the Leases are down (RBAC, the namespace missing...): decide on this
            # gateway's own view rather than not at all
            if not self._lease_warned:
                log.warning("autoscaling without the other gateways' demand: %s", e)
                self._lease_warned = True
            others = []
        else:
            self._lease_warned = False
        for lease in others:
            for key, value in lease.items():
                totals[key] = totals.get(key, 0) + value
        self.gateways = 1 + len(others)
        written: dict[Key, int] = {}
        for key in set(totals) | self._active:
            replicas = await self._decide(key, totals.get(key, 0))
            if replicas is not None:
                written[key] = replicas
        self._active = set(totals)
        return written

    async def _decide(self, key: Key, demand: int) -> int | None:
        namespace, name = key
        spec = self._serving(namespace, name)
        if spec is None or self._disabled(namespace, name):
            self.replicas.pop(key, None)
            return None
        lower, upper = bounds(spec, self.settings.limits.max_instances)
        path = object_path("apps/v1", "Deployment", namespace, labels.function_object_name(name))
        scale = await self.api.get(path + "/scale")
        if scale is None:
            self.replicas.pop(key, None)
            return None
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        if current == 0:
            # the operator scaled it to 0 (its triggers are off): not ours to undo
            self.replicas[key] = 0
            return None
        wanted = desired_replicas(demand, spec.concurrency, lower, upper)
        self.replicas[key] = current
        if wanted == current:
            return None
        if await self.api.merge_patch(path + "/scale", {"spec": {"replicas": wanted}}) is None:
            return None  # deleted meanwhile
        self.decisions += 1
        self.replicas[key] = wanted
        log.info("scaled %s/%s from %d to %d (demand %d)", namespace, name, current, wanted, demand)
        return wanted

    # -- the demand Leases -------------------------------------------------------------

    def _lease_name(self) -> str:
        return f"sless-demand-{self.identity}"

    def _stale_after_s(self) -> float:
        return max(10.0, 5 * self.settings.kubernetes.autoscale_interval_s)

    async def _publish(self, demands: dict[Key, int]) -> None:
        table = {f"{ns}/{name}": n for (ns, name), n in sorted(demands.items())[:MAX_PUBLISHED]}
        now = time.monotonic()
        if table == self._published and now - self._published_at < self._stale_after_s() / 3:
            return
        k = self.settings.kubernetes
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self._lease_name(),
                "namespace": k.gateway_namespace,
                "labels": {DEMAND_LABEL: "true", "app.kubernetes.io/managed-by": "sless"},
                "annotations": {DEMAND_ANNOTATION: json.dumps(table, separators=(",", ":"))},
            },
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": math.ceil(self._stale_after_s()),
                "renewTime": _micro_time(datetime.now(UTC)),
            },
        }
        await self.api.apply(lease)
        self._published, self._published_at = table, now

    async def _other_leases(self) -> list[dict[Key, int]]:
        k = self.settings.kubernetes
        path = collection_path("coordination.k8s.io/v1", "Lease", k.gateway_namespace)
        now = datetime.now(UTC)
        found: list[dict[Key, int]] = []
        for item in await self.api.list(path, label_selector=f"{DEMAND_LABEL}=true"):
            spec = item.get("spec") or {}
            if item["metadata"].get("name") == self._lease_name():
                continue
            renewed = _parse_time(spec.get("renewTime"))
            duration = spec.get("leaseDurationSeconds")
            if renewed is None or not isinstance(duration, int):
                continue
            if (now - renewed).total_seconds() > duration:
                continue  # a gateway that stopped: its demand is gone
            try:
                table = json.loads((item["metadata"].get("annotations") or {})[DEMAND_ANNOTATION])
            except (KeyError, ValueError, TypeError):
                continue
            demands: dict[Key, int] = {}
            if isinstance(table, dict):
                for function, value in list(table.items())[:MAX_PUBLISHED]:
                    ns, _, name = str(function).partition("/")
                    if name and isinstance(value, int) and value > 0:
                        demands[(ns, name)] = value
            found.append(demands)
        return found

    async def withdraw(self) -> None:
        """Delete this gateway's Lease (at a clean stop): its demand ends at once."""
        k = self.settings.kubernetes
        path = object_path(
            "coordination.k8s.io/v1", "Lease", k.gateway_namespace, self._lease_name()
        )
        with contextlib.suppress(SlessError):
            await self.api.delete(path)

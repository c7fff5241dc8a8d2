"""A function's logs in Kubernetes mode: the tail of its pods' output, newest pods first."""

from __future__ import annotations

from sless.errors import Invalid, NotFound
from sless.kube import Forbidden, KubeApi
from sless.policies import labels

#: at most this many pods' logs in one answer
_LOG_PODS = 5


async def pod_logs(api: KubeApi, namespace: str, name: str, *, tail_bytes: int) -> str:
    """The tail of the function's pods' output, newest pods first.

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
        try:
            text = await api.request_text(
                "GET",
                f"/api/v1/namespaces/{namespace}/pods/{pod_name}/log",
                params={"tailLines": str(min(10000, max(100, per_pod // 40)))},
            )
        except (Invalid, NotFound, Forbidden) as e:
            # not started yet (400 "ContainerCreating"), gone meanwhile, or not allowed
            text = f"[no logs: {e.message}]\n"
        parts.append(f"==> {pod_name} <==\n{text[-per_pod:]}")
    return "\n".join(parts)[-tail_bytes:]

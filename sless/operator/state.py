"""What every handler shares: the API client, the build contexts, the settings, a lock per
object (a kopf handler and an event-driven wake-up never reconcile one object at once), and
the helpers that write ``status`` without feeding the watch a change that is not one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sless.config import Settings
from sless.kube import KubeApi, object_path
from sless.operator.contexts import BuildContexts


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Operator:
    settings: Settings
    api: KubeApi
    contexts: BuildContexts | None
    _locks: dict[tuple[str, str, str], asyncio.Lock] = field(default_factory=dict)
    #: (namespace, function) -> the last ``last-call`` annotation acted on (wake-ups)
    last_calls: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def group_version(self) -> str:
        k = self.settings.kubernetes
        return f"{k.group}/{k.version}"

    def cr_path(self, kind: str, namespace: str | None, name: str) -> str:
        return object_path(self.group_version, kind, namespace, name)

    @contextlib.asynccontextmanager
    async def locked(self, kind: str, namespace: str, name: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault((kind, namespace, name), asyncio.Lock())
        async with lock:
            yield

    def forget(self, kind: str, namespace: str, name: str) -> None:
        self._locks.pop((kind, namespace, name), None)

    async def patch_status(
        self,
        kind: str,
        namespace: str | None,
        name: str,
        current: dict[str, Any],
        changes: dict[str, Any],
    ) -> None:
        """Merge ``changes`` into ``status`` unless every one of them is already there (an
        unchanged status is not written: no timestamp-only update re-triggers a watch)."""
        if all(current.get(key) == value for key, value in changes.items()):
            return
        await self.api.merge_patch(
            self.cr_path(kind, namespace, name) + "/status",
            {"status": {**changes, "updated_at": now()}},
        )
        current.update(changes)

    def invoke_base_url(self) -> str:
        k, g = self.settings.kubernetes, self.settings.gateway
        return (
            k.invoke_base_url
            or g.public_url
            or f"http://sless-gateway.{k.gateway_namespace}.svc:{g.port}"
        )

    async def node_addresses(self) -> list[str]:
        """Every address the cluster's Nodes report (internal and external): a node's
        kubelet and host ports answer there. Function egress always excepts them, as it
        does the API server's; a change in them writes every function's policies again
        (``sless.operator.nodes``)."""
        found: set[str] = set()
        for node in await self.api.list("/api/v1/nodes"):
            for address in (node.get("status") or {}).get("addresses") or []:
                if address.get("type") in ("InternalIP", "ExternalIP") and address.get("address"):
                    found.add(str(address["address"]))
        return sorted(found)

    async def api_server_addresses(self) -> list[str]:
        """Where the Kubernetes API answers: settings, the ``kubernetes`` Service's cluster
        IPs and its EndpointSlices' addresses. Function egress always excepts these."""
        found = list(self.settings.kubernetes.api_server_cidrs)
        service = await self.api.get(object_path("v1", "Service", "default", "kubernetes"))
        if service:
            found += [ip for ip in service["spec"].get("clusterIPs") or [] if ip != "None"]
        slices = await self.api.list(
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            "kubernetes.io/service-name=kubernetes",
        )
        for item in slices:
            for endpoint in item.get("endpoints") or []:
                found += endpoint.get("addresses") or []
        return sorted(set(found))


def owner_reference(body: dict[str, Any]) -> dict[str, Any]:
    """Makes ``body`` the controller of an object in the same namespace (or a cluster-scoped
    one of a cluster-scoped owner): the garbage collector removes it with its owner, even if
    a finalizer never ran."""
    return {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "name": body["metadata"]["name"],
        "uid": body["metadata"]["uid"],
        "controller": True,
    }


def with_owner(obj: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["ownerReferences"] = [owner_reference(body)]
    return obj


def condition(
    conditions: list[dict[str, Any]], kind: str, status: bool, reason: str, message: str = ""
) -> list[dict[str, Any]]:
    """``conditions`` with ``kind`` set; its transition time only moves when status does."""
    value = "True" if status else "False"
    out: list[dict[str, Any]] = []
    previous = None
    for item in conditions:
        if item.get("type") == kind:
            previous = item
        else:
            out.append(item)
    changed = previous is None or previous.get("status") != value
    out.append(
        {
            "type": kind,
            "status": value,
            "reason": reason,
            "message": message[:1000],
            "lastTransitionTime": now()
            if changed or previous is None
            else previous.get("lastTransitionTime"),
        }
    )
    return sorted(out, key=lambda c: str(c.get("type")))


def conditions_equal(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    return a == b

"""The gateway's side of tenants in Kubernetes mode: the Tenant resource.

The operator owns what a Tenant makes (the namespace ``sless-<tenant>``, its policies and
quotas); the gateway creates and deletes the resource, and reads the limits the provider
sets on it with kubectl (``spec.limits``, which win over the stored overrides).
"""

from __future__ import annotations

import contextlib
import logging

from sless.errors import NotFound
from sless.kube import AlreadyExists, KubeApi

log = logging.getLogger(__name__)


class TenantResources:
    api: KubeApi
    _root: str
    _api_version: str

    async def provision_tenant(self, tenant: str) -> None:
        """Create the tenant's Tenant resource if it is missing; the operator makes the
        namespace ``sless-<tenant>`` and its policies from it. Idempotent."""
        body = {
            "apiVersion": self._api_version,
            "kind": "Tenant",
            "metadata": {"name": tenant, "labels": {"app.kubernetes.io/managed-by": "sless"}},
            "spec": {},
        }
        with contextlib.suppress(AlreadyExists):
            await self.api.request("POST", f"{self._root}/tenants", body=body)
            log.info("created the Tenant resource of %s", tenant)

    async def tenant_limits(self, tenant: str) -> dict[str, int]:
        """``spec.limits`` of the tenant's Tenant resource (the provider edits it with
        kubectl); {} when it has none or is missing."""
        try:
            body = await self.api.request("GET", f"{self._root}/tenants/{tenant}")
        except NotFound:
            return {}
        limits = ((body or {}).get("spec") or {}).get("limits") or {}
        return {k: v for k, v in limits.items() if isinstance(v, int)}

    async def remove_tenant(self, tenant: str) -> None:
        """Delete the Tenant resource: the namespace it owns goes with it."""
        with contextlib.suppress(NotFound):
            await self.api.request("DELETE", f"{self._root}/tenants/{tenant}")

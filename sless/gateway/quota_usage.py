"""A tenant's limits and what it uses of each: ``GET /v1/limits`` and the admin's view.

Every quota of ``sless.tenancy.quotas.QUOTAS``, each as ``{"limit", "used", "scope",
"when_reached"}``: ``scope`` is ``tenant`` (a sum over the tenant) or ``function`` (a bound
per function: ``used`` is the largest figure of one function), ``when_reached`` is
``refused`` (403 ``quota_exceeded``) or ``oldest dropped`` (versions, log lines,
Idempotency-Key records: the platform keeps the newest within the bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sless.backends import Backend
from sless.models import tenant_of
from sless.store import IdempotencyRepository, QueueRepository, SecretRepository, VersionRepository
from sless.tenancy import Tenancy, Usage
from sless.tenancy.quotas import QUOTAS

_PER_FUNCTION = {"max_instances", "versions"}
_DROPPED = {"versions", "log_bytes"}


@dataclass(frozen=True)
class QuotaUsage:
    """What a tenant's use is counted from (built once, ``Platform.start``)."""

    tenancy: Tenancy
    backend: Backend
    secrets: SecretRepository
    versions: VersionRepository
    queue: QueueRepository
    idempotency_keys: IdempotencyRepository

    async def _used(self, ns: str) -> dict[str, int | None]:
        functions = await self.backend.list_functions(ns)
        owned = Usage.of([f.spec for f in functions])
        secrets = await self.secrets.usage(ns)
        versions = await self.versions.counts(ns)
        return {
            "functions": owned.functions,
            "memory_mb": owned.memory_mb,
            "code_bytes": owned.code_bytes,
            "max_instances": max((f.spec.max_instances for f in functions), default=0),
            "versions": max(versions.values(), default=0),
            "triggers": len(await self.backend.list_triggers(ns)),
            "jobs": len(await self.backend.list_jobs(ns)),
            "secrets": len(secrets),
            "secret_bytes": sum(secrets.values()),
            "tokens": await self.tenancy.tokens.count_active(tenant_of(ns)),
            "queued_calls": await self.queue.pending(ns),
            "log_bytes": self.backend.log_bytes(ns),
        }

    async def view(self, ns: str) -> dict[str, Any]:
        """``{"namespace", "limits": {quota: {limit, used, scope, when_reached}}}``."""
        quota = await self.tenancy.quotas.read(ns)
        used = await self._used(ns)
        limits: dict[str, Any] = {
            name: {
                "limit": quota.limit(name),
                "used": used[name],
                "scope": "function" if name in _PER_FUNCTION else "tenant",
                "when_reached": "oldest dropped" if name in _DROPPED else "refused",
            }
            for name in QUOTAS
        }
        keys = self.idempotency_keys
        limits["idempotency_keys"] = {
            "limit": keys.max_keys,
            "used": await keys.count(ns),
            "scope": "tenant",
            "when_reached": "oldest dropped",
        }
        return {"namespace": ns, "limits": limits}

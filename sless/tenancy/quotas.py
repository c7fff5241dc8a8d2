"""Per-tenant quotas: how many functions, how much memory, how much stored code.

Counted from what the tenant owns (``Backend.list_functions``), so the same check holds
in embedded and in Kubernetes mode:

- ``functions``: the number of functions;
- ``memory_mb``: the sum of the ``memory_mb`` of the function specs (what their workers
  or pods may use at once);
- ``code_bytes``: the sum of the sizes of the zips the functions currently point at. A zip
  that two functions share counts twice, and code a function no longer points at counts
  no more: the figure is what the tenant's functions are made of, which it controls;
- ``max_instances``: a bound per function, not a sum: the instances (workers or pods) one
  function may scale to. The backends also cap what runs by it, so lowering the quota
  takes effect on functions written before;
- ``max_versions``: how many versions of each function are kept (``sless.functions.versioning``
  prunes the oldest, never the current one nor a traffic target, and deletes the code no
  version refers to any more). It bounds the stored code of old versions, which
  ``code_bytes`` does not count.

- ``triggers``, ``jobs``, ``secrets``, ``tokens``: how many the tenant has (triggers of
  every type; a job keeps one definition and its last run; tokens not revoked);
- ``secret_bytes``: the sum of the sizes of its secrets' values;
- ``queued_calls``: its asynchronous calls queued or running (checked by the queue's
  insert itself, under a per-tenant lock of its own: ``store.QueueRepository.enqueue``);
- ``log_bytes``: its functions' logs on disk (embedded mode: the local backend drops the
  oldest lines past it, ``backends.local.logfiles``); not a refusal, a bound.

Every limit is ``LimitsSettings``' ``max_<quota>`` unless the provider set another for the
tenant: ``PUT /v1/admin/tenants/{tenant}/limits`` (table ``tenant_limits``), and in
Kubernetes mode the Tenant resource's ``spec.limits``, which wins (``Quotas.external``).

A change is refused (``QuotaExceeded``, 403 as a Kubernetes ResourceQuota refusal) only
when it makes a figure both larger than before and larger than its limit: an update that
does not grow, or shrinks, always passes, even for a tenant already above a lowered
limit; deleting frees room at once.

Check-then-write must be atomic, or ten concurrent creates with room for three would all
see room. ``Quotas.guard`` serialises a tenant's checked writes across gateway processes
with a PostgreSQL advisory lock (``store.TenantLock``). In this process the tenant's
writers first queue on an ``asyncio.Lock`` (one connection waits per tenant, not one per
request), and a semaphore bounds how many tenants hold a lock connection at once: a
holder needs a second pool connection for its write, so holders must stay well below the
pool size or they would wait on each other forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass

import asyncpg

from sless.config import LimitsSettings
from sless.errors import QuotaExceeded
from sless.models import Function, FunctionSpec, TenantLimits, tenant_of
from sless.store import TenantLimitsRepository, TenantLock

#: each quota: its ``LimitsSettings`` field and the unit of its figures
QUOTAS: dict[str, tuple[str, str]] = {
    "functions": ("max_functions", ""),
    "memory_mb": ("max_memory_mb", " MiB"),
    "code_bytes": ("max_code_bytes", " bytes"),
    "max_instances": ("max_instances", ""),
    "versions": ("max_versions", ""),
    "triggers": ("max_triggers", ""),
    "jobs": ("max_jobs", ""),
    "secrets": ("max_secrets", ""),
    "secret_bytes": ("max_secret_bytes", " bytes"),
    "tokens": ("max_tokens", ""),
    "queued_calls": ("max_queued_calls", ""),
    "log_bytes": ("max_log_bytes", " bytes"),
}
#: how long ``Quotas.of`` trusts the limits it read (a provider's change reaches the
#: checks under ``guard`` at once, the unlocked ones within this time)
_CACHE_TTL_S = 5.0
_CACHE_MAX = 10_000


@dataclass(frozen=True)
class Usage:
    functions: int = 0
    memory_mb: int = 0
    code_bytes: int = 0

    @classmethod
    def of(cls, specs: Sequence[FunctionSpec]) -> Usage:
        return cls(
            functions=len(specs),
            memory_mb=sum(spec.memory_mb for spec in specs),
            code_bytes=sum(spec.code.size for spec in specs if spec.code is not None),
        )


def check_quota(settings: LimitsSettings, quota: str, used: int, requested: int) -> None:
    """Refuse growing ``quota`` from ``used`` to ``requested`` past its limit (pure)."""
    field, unit = QUOTAS[quota]
    limit: int = getattr(settings, field)
    if requested > limit and requested > used:
        raise QuotaExceeded.past(quota, used=used, requested=requested, limit=limit, unit=unit)


def check_usage(before: Usage, after: Usage, settings: LimitsSettings) -> None:
    """Refuse ``after`` if one of its figures grows past its limit (pure: no I/O)."""
    for quota in ("functions", "memory_mb", "code_bytes"):
        check_quota(settings, quota, getattr(before, quota), getattr(after, quota))


def check_function(
    settings: LimitsSettings, current: Sequence[Function], name: str, spec: FunctionSpec
) -> None:
    """Create or replace function ``name`` with ``spec`` (its code kept as it is)."""
    existing = next((f for f in current if f.name == name), None)
    if existing is not None and spec.code is None:
        spec = spec.model_copy(update={"code": existing.spec.code})
    before = existing.spec.max_instances if existing is not None else 0
    if spec.max_instances > settings.max_instances and spec.max_instances > before:
        raise QuotaExceeded(
            f"quota max_instances exceeded: this function asks for {spec.max_instances} "
            f"instances, the limit is {settings.max_instances} per function",
            details={
                "quota": "max_instances",
                "used": before,
                "requested": spec.max_instances,
                "limit": settings.max_instances,
            },
        )
    after = [f.spec for f in current if f.name != name] + [spec]
    check_usage(Usage.of([f.spec for f in current]), Usage.of(after), settings)


def check_code(settings: LimitsSettings, current: Sequence[Function], name: str, size: int) -> None:
    """Point function ``name`` (one of ``current``) at new code of ``size`` bytes."""
    before = Usage.of([f.spec for f in current])
    code_bytes = before.code_bytes + size
    for function in current:
        if function.name == name and function.spec.code is not None:
            code_bytes -= function.spec.code.size
    after = Usage(functions=before.functions, memory_mb=before.memory_mb, code_bytes=code_bytes)
    check_usage(before, after, settings)


def with_overrides(settings: LimitsSettings, *overrides: dict[str, int]) -> LimitsSettings:
    """``settings`` with a tenant's own limits (later ones win), each checked as
    ``TenantLimits`` checks it: a bad stored value is ignored, never a crash."""
    update: dict[str, int] = {}
    for given in overrides:
        valid = TenantLimits.model_fields.keys() & given.keys()
        try:
            update.update(TenantLimits.model_validate({k: given[k] for k in valid}).overrides())
        except ValueError:
            continue
    return settings.model_copy(update=update)


@dataclass(frozen=True)
class TenantQuota:
    """One tenant's limits, and the checks of a write against them (pure)."""

    namespace: str
    limits: LimitsSettings

    def limit(self, quota: str) -> int:
        value: int = getattr(self.limits, QUOTAS[quota][0])
        return value

    def check(self, quota: str, used: int, requested: int) -> None:
        """Refuse growing ``quota`` from ``used`` to ``requested`` past the limit."""
        check_quota(self.limits, quota, used, requested)

    def check_new(self, quota: str, names: Sequence[str], name: str) -> None:
        """Refuse creating ``name`` when the tenant already has ``names`` (a replace of
        one of them always passes)."""
        if name not in names:
            self.check(quota, len(names), len(names) + 1)

    def check_function(self, current: Sequence[Function], name: str, spec: FunctionSpec) -> None:
        check_function(self.limits, current, name, spec)

    def check_code(self, current: Sequence[Function], name: str, size: int) -> None:
        check_code(self.limits, current, name, size)


class Quotas:
    """The tenant quotas of ``LimitsSettings`` (or the tenant's own), with the lock that
    makes them atomic."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        settings: LimitsSettings,
        *,
        external: Callable[[str], Awaitable[dict[str, int]]] | None = None,
    ) -> None:
        self.settings = settings
        self.overrides = TenantLimitsRepository(pool)
        #: the mode's own per-tenant limits (Kubernetes: the Tenant resource's
        #: ``spec.limits``): the gateway passes its backend's ``tenant_limits``
        self.external = external
        self._lock = TenantLock(pool)
        self._local: dict[str, tuple[asyncio.Lock, int]] = {}
        self._cache: dict[str, tuple[TenantQuota, float]] = {}
        # the pool also holds the backend's LISTEN connection; see the module docstring
        self._holders = asyncio.Semaphore(max(1, (pool.get_max_size() - 2) // 2))

    async def read(self, namespace: str) -> TenantQuota:
        """The tenant's limits as they are stored now."""
        tenant = tenant_of(namespace)
        stored = await self.overrides.get(tenant)
        external = await self.external(tenant) if self.external is not None else {}
        quota = TenantQuota(namespace, with_overrides(self.settings, stored, external))
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[namespace] = (quota, time.monotonic() + _CACHE_TTL_S)
        return quota

    async def of(self, namespace: str) -> TenantQuota:
        """The tenant's limits, read at most every few seconds (for checks that do not
        run under ``guard``)."""
        cached = self._cache.get(namespace)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        return await self.read(namespace)

    def forget(self, namespace: str) -> None:
        self._cache.pop(namespace, None)

    @contextlib.asynccontextmanager
    async def guard(self, namespace: str) -> AsyncIterator[TenantQuota]:
        """Run the block (read what the tenant owns, check, write) as the tenant's only
        checked writer, in this process and in every other one; it gets the tenant's
        limits as they are stored now."""
        lock, users = self._local.get(namespace) or (asyncio.Lock(), 0)
        self._local[namespace] = (lock, users + 1)
        try:
            async with lock, self._holders, self._lock.hold(namespace):
                yield await self.read(namespace)
        finally:
            lock, users = self._local[namespace]
            if users <= 1:
                del self._local[namespace]  # bounded by the tenants writing right now
            else:
                self._local[namespace] = (lock, users - 1)

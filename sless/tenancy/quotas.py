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
- ``max_versions``: how many versions of each function are kept (``sless.gateway.versioning``
  prunes the oldest, never the current one nor a traffic target, and deletes the code no
  version refers to any more). It bounds the stored code of old versions, which
  ``code_bytes`` does not count.

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
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import asyncpg

from sless.config import LimitsSettings
from sless.errors import QuotaExceeded
from sless.models import Function, FunctionSpec
from sless.store import TenantLock


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


_UNITS = {"functions": "", "memory_mb": " MiB", "code_bytes": " bytes"}


def check_usage(before: Usage, after: Usage, settings: LimitsSettings) -> None:
    """Refuse ``after`` if one of its figures grows past its limit (pure: no I/O)."""
    limits = {
        "functions": settings.max_functions,
        "memory_mb": settings.max_memory_mb,
        "code_bytes": settings.max_code_bytes,
    }
    for quota, limit in limits.items():
        used, wanted = getattr(before, quota), getattr(after, quota)
        if wanted > limit and wanted > used:
            unit = _UNITS[quota]
            raise QuotaExceeded(
                f"quota {quota} exceeded: this change needs {wanted}{unit}, the limit is "
                f"{limit}{unit} ({used}{unit} in use)",
                details={"quota": quota, "used": used, "requested": wanted, "limit": limit},
            )


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


class Quotas:
    """The tenant quotas of ``LimitsSettings``, with the lock that makes them atomic."""

    def __init__(self, pool: asyncpg.Pool, settings: LimitsSettings) -> None:
        self.settings = settings
        self._lock = TenantLock(pool)
        self._local: dict[str, tuple[asyncio.Lock, int]] = {}
        # the pool also holds the backend's LISTEN connection; see the module docstring
        self._holders = asyncio.Semaphore(max(1, (pool.get_max_size() - 2) // 2))

    @contextlib.asynccontextmanager
    async def guard(self, namespace: str) -> AsyncIterator[None]:
        """Run the block (read what the tenant owns, check, write) as the tenant's only
        checked writer, in this process and in every other one."""
        lock, users = self._local.get(namespace) or (asyncio.Lock(), 0)
        self._local[namespace] = (lock, users + 1)
        try:
            async with lock, self._holders, self._lock.hold(namespace):
                yield
        finally:
            lock, users = self._local[namespace]
            if users <= 1:
                del self._local[namespace]  # bounded by the tenants writing right now
            else:
                self._local[namespace] = (lock, users - 1)

    def check_function(self, current: Sequence[Function], name: str, spec: FunctionSpec) -> None:
        check_function(self.settings, current, name, spec)

    def check_code(self, current: Sequence[Function], name: str, size: int) -> None:
        check_code(self.settings, current, name, size)

    @property
    def versions_kept(self) -> int:
        """Versions kept per function (the current one and traffic targets besides)."""
        return self.settings.max_versions

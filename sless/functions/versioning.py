"""Function versions, rollback and the traffic split: the rules both modes share.

A version is immutable: the code (sha256, blob) and the spec it runs with, minus the
traffic split. Versions are made here, never by a backend:

- an upload that passed validation (or is held for review) makes the next version;
- a ``PUT`` of the spec that changes what runs (anything but ``traffic``) of a function
  that has code makes a new version of the same code with the new spec: a version's spec
  never changes under it, so ``rollback`` and ``@vN`` serve exactly what that version was;
- ``rollback`` makes no version: the function's spec becomes the version's again (and its
  traffic split is cleared). The build is cached by sha256, so nothing is built again.

The spec's ``code.version`` names the current version; ``traffic`` splits calls between
named versions (all of them existing and allowed; the percents add up to 100). Old
versions are pruned to the tenant's ``limits.max_versions`` per function, never the
current one nor a traffic target; the blob (and build) of a sha256 that no version and no
function refers to any more is then deleted (``collect_code``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from sless.errors import Conflict, Invalid, NotFound
from sless.functions.services import FunctionServices, Precondition
from sless.models import Function, FunctionSpec, TrafficTarget, VersionState
from sless.tenancy import Principal

log = logging.getLogger(__name__)


def actor_of(principal: Principal | None) -> str:
    """Who made a version, as the audit log names an actor (never a token)."""
    if principal is None:
        return "unknown"
    if principal.is_admin:
        return f"admin (token {principal.token_id})"
    return f"tenant {principal.tenant} (token {principal.token_id}, {principal.via})"


def state_of(verdict_held: bool) -> VersionState:
    return VersionState.HELD if verdict_held else VersionState.ALLOWED


async def servable(services: FunctionServices, ns: str, name: str, versions: Sequence[str]) -> None:
    """422 unless every version exists and may serve (the code gate decides)."""
    if versions:
        await services.gate.require(ns, name, versions)


async def check_traffic(
    services: FunctionServices, ns: str, name: str, spec: FunctionSpec, existing: Function | None
) -> None:
    """The traffic split of a PUT names versions that exist and may serve."""
    if not spec.traffic:
        return
    if existing is None or existing.spec.code is None:
        raise Invalid("traffic: the function has no versions yet; upload code first")
    await servable(services, ns, name, [t.version for t in spec.traffic])


async def version_for_put(
    services: FunctionServices,
    ns: str,
    name: str,
    spec: FunctionSpec,
    existing: Function | None,
    principal: Principal | None,
) -> FunctionSpec:
    """The spec to store for a PUT (its code kept), under a new version when what runs
    changed. Runs under the tenant's write lock."""
    if existing is None or existing.spec.code is None:
        return spec
    code = existing.spec.code
    desired = spec.model_copy(update={"code": code})
    if desired.runnable() == existing.spec.runnable() or code.version is None:
        # nothing that runs changed (a traffic change, or the same spec again); code from
        # before versions keeps no history until its next upload
        return desired
    try:
        current = await services.versions.get(ns, name, code.version)
    except NotFound:
        # never written so; a version of unknown code must not be made "allowed" here
        raise Conflict(
            f"the current version of {name!r} is not recorded: upload the code again"
        ) from None
    version = await services.versions.next_version(ns, name)
    desired = spec.model_copy(update={"code": code.model_copy(update={"version": version})})
    await services.versions.create(
        ns,
        name,
        version,
        desired,
        # the same code as the current version: its review state too (a held version's copy
        # is held; the gate keeps it from serving until the review approves the code)
        validation=current.validation,
        state=current.state,
        created_by=actor_of(principal),
    )
    return desired


def upload_traffic(previous: str | None, new: str, percent: int | None) -> list[TrafficTarget]:
    """The split after an upload: all to the new version, or ``percent`` to it and the rest
    to the version that was current (``sless deploy --traffic N``)."""
    if percent is None:
        return []
    if previous is None:
        raise Invalid("traffic: there is no previous version to keep the rest of the calls")
    if not 0 <= percent <= 100:
        raise Invalid("traffic: the percent of the new version is 0..100")
    return [
        TrafficTarget(version=previous, percent=100 - percent),
        TrafficTarget(version=new, percent=percent),
    ]


async def prune(
    services: FunctionServices, ns: str, name: str, spec: FunctionSpec, serving: str | None
) -> None:
    """Keep the newest ``max_versions`` versions (and every routed one); collect the code."""
    protected = spec.routed_versions() + ([serving] if serving else [])
    keep = (await services.quotas.of(ns)).limit("versions")
    removed = await services.versions.prune(ns, name, keep=keep, protected=protected)
    await collect_code(services, removed)


async def collect_code(services: FunctionServices, shas: Sequence[str]) -> None:
    """Delete the blob (and build) of each sha256 that nothing refers to any more."""
    for sha in shas:
        try:
            if await services.versions.sha256_in_use(sha):
                continue
            if await services.backend.release_code(sha):
                await services.blobs.delete(sha)
        except Exception as e:  # a blob left behind is garbage, never a failed request
            log.warning("collecting code %s failed: %s", sha[:12], type(e).__name__)


async def rollback_spec(
    services: FunctionServices, ns: str, name: str, version: str
) -> FunctionSpec:
    """The spec that serves ``version`` again: exactly the version's, no traffic split."""
    await servable(services, ns, name, [version])
    record = await services.versions.get(ns, name, version)
    spec = record.spec.runnable()
    if spec.code is None or spec.code.version != version:
        raise Invalid(f"version {version} of {name!r} has no code")  # never written so
    return spec


async def rollback(
    services: FunctionServices,
    ns: str,
    name: str,
    version: str,
    *,
    precondition: Precondition | None,
) -> Function:
    """Serve ``version`` again, under the tenant's write lock: the function's spec becomes
    that version's (its secrets must exist, the tenant's quota must hold it), no split."""
    async with services.quotas.guard(ns) as quota:
        current = await services.backend.list_functions(ns)
        existing = next((f for f in current if f.name == name), None)
        if existing is None:
            raise NotFound(f"function {name!r} not found")
        if precondition is not None:
            precondition.check(existing.resource_version)
        spec = await rollback_spec(services, ns, name, version)
        missing = await services.secrets.missing(ns, spec.secret_names())
        if missing:
            raise Invalid(
                f"version {version} names secret {missing[0]!r}, which does not exist"
                f" in namespace {ns}: create it first"
            )
        quota.check_function(current, name, spec)
        return await services.backend.put_function(ns, name, spec)


def traffic_detail(traffic: Sequence[TrafficTarget]) -> str:
    """The audit detail of a traffic change: versions and percents (no user text)."""
    shares = ", ".join(f"{t.version} {t.percent}%" for t in traffic)
    return f"traffic: {shares or 'all to the current version'}"


async def forget_function(services: FunctionServices, ns: str, name: str) -> None:
    """After a function is deleted: its versions, then the code nothing refers to."""
    await collect_code(services, await services.versions.delete_function(ns, name))


async def forget_namespace(services: FunctionServices, ns: str) -> None:
    """After a tenant's namespace is deleted: every version of it, then the code."""
    await collect_code(services, await services.versions.delete_namespace(ns))

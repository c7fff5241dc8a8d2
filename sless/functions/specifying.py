"""Putting a function's spec (created, or replaced under a new version when what runs
changed) and deleting a function.

An egress rule naming only addresses the provider refuses (a private range it does not
allow, loopback, metadata: ``sless.models.reach``) is refused with the rule and the
setting that would allow it. The spec names only secrets that exist (in the caller's
namespace); the count, the check and the write happen as the tenant's only writer
(``Quotas.guard``), so concurrent creates cannot all see the last free slot, and of two
racing writers with a precondition one sees the other's write. A traffic split names
versions that exist and may serve (the code gate decides, ``versioning.servable``); a
change of what runs (anything but ``traffic``) of a function that has code makes a new
version of the same code with its review state (``versioning.version_for_put``), then old
versions are pruned.

Every entry point that writes a spec (today the gateway's ``PUT .../functions/{name}``)
calls :func:`put`, and one that deletes a function :func:`delete`; parsing the body and
the HTTP answer stay in the router.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from sless.errors import Invalid
from sless.functions import versioning
from sless.functions.services import FunctionServices, Precondition
from sless.models import EgressReach, Function, FunctionSpec
from sless.tenancy import Principal


@dataclass(frozen=True)
class Put:
    function: Function
    created: bool


async def put(
    services: FunctionServices,
    ns: str,
    name: str,
    spec: FunctionSpec,
    *,
    precondition: Precondition | None,
    principal: Principal | None,
    on_traffic_change: Callable[[str], None],
) -> Put:
    """Create or replace the spec of ``ns/name``; ``on_traffic_change`` is told the audit
    detail of a changed traffic split (before the write: a failed write is audited too)."""
    _check_egress_reach(spec, services.reach)
    missing = await services.secrets.missing(ns, spec.secret_names())
    if missing:
        # a name only (no value exists to leak); always looked up in the caller's namespace
        raise Invalid(f"secret {missing[0]!r} not found in namespace {ns}: create it first")
    # count, check and write as the tenant's only writer: concurrent creates cannot all
    # see the last free slot (sless/tenancy/quotas.py)
    async with services.quotas.guard(ns) as quota:
        current = await services.backend.list_functions(ns)
        existing = next((f for f in current if f.name == name), None)
        if precondition is not None:
            # under the tenant's write lock: of two racing writers one sees the other's write
            precondition.check(existing.resource_version if existing else None)
        quota.check_function(current, name, spec)
        await versioning.check_traffic(services, ns, name, spec, existing)
        if existing is not None and spec.traffic != existing.spec.traffic:
            on_traffic_change(versioning.traffic_detail(spec.traffic))
        spec = await versioning.version_for_put(services, ns, name, spec, existing, principal)
        function = await services.backend.put_function(ns, name, spec)
        if existing is not None and function.spec.version != existing.spec.version:
            await versioning.prune(services, ns, name, function.spec, existing.status.version)
    return Put(function=function, created=existing is None)


def _check_egress_reach(spec: FunctionSpec, reach: EgressReach) -> None:
    """An egress rule whose address or CIDR lies wholly in a range the provider refuses
    (``sless.models.reach``) could never be used: refused now, with the rule that refuses
    it. A name is checked when it is resolved (the egress proxy, callbacks)."""
    for rule in spec.egress:
        host = rule.rpartition(":")[0].strip("[]")
        try:
            network = ipaddress.ip_network(host, strict=False)
        except ValueError:
            continue  # a host name
        reason = reach.network_refusal(network)
        if reason is not None:
            raise Invalid(f"egress rule {rule[:80]!r} is refused: {reason}")


async def delete(
    services: FunctionServices, ns: str, name: str, *, precondition: Precondition | None
) -> None:
    """Delete ``ns/name`` (checked against ``precondition`` under the tenant's write lock),
    then its versions and the code nothing refers to any more."""
    if precondition is None:
        await services.backend.delete_function(ns, name)
    else:
        async with services.quotas.guard(ns):
            precondition.check((await services.backend.get_function(ns, name)).resource_version)
            await services.backend.delete_function(ns, name)
    await versioning.forget_function(services, ns, name)

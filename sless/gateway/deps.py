"""FastAPI dependencies as ``Annotated`` aliases.

The caller is resolved once from the bearer token (``PrincipalDep``); the ``{ns}`` of a
path is compared with the caller's namespace in exactly one place (``NamespaceDep``). A
namespace that is not the caller's answers 404, exactly like a missing object, so that a
tenant cannot learn whether another tenant's objects exist.

Resolving the caller is also where the management API's limits apply: failed attempts
per client address, then the tenant's token bucket (429 with ``Retry-After``; the bucket's
state goes out as ``RateLimit`` headers, ``sless.gateway.ratelimits``). ``NameDep`` checks
the ``{name}`` of a path for every router.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from sless.errors import Invalid, NotFound, Unauthorized
from sless.functions import FunctionServices
from sless.gateway.audit import stash_principal
from sless.gateway.platform import Platform
from sless.gateway.ratelimits import STATE_KEY
from sless.models import check_name
from sless.tenancy import Principal


def client_address(client: tuple[str, int] | None) -> str:
    return client[0] if client else "unknown"


def get_platform(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


PlatformDep = Annotated[Platform, Depends(get_platform)]


def get_functions(request: Request) -> FunctionServices:
    """The function lifecycle's services (``sless.functions``), for its use cases."""
    functions: FunctionServices = request.app.state.platform.functions
    return functions


FunctionsDep = Annotated[FunctionServices, Depends(get_functions)]


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def get_principal(request: Request, platform: PlatformDep) -> Principal:
    """The caller; failed attempts are limited per address, tenants per rate limit."""
    token = bearer_token(request.headers.get("authorization"))
    address = client_address(request.client)
    principal = await platform.tenancy.authenticate_from(token, address)
    stash_principal(request, principal)  # before the limit: a refused call has an actor too
    if principal.tenant is not None:
        # the provider admin is not rate-limited: it is the operator of the platform
        limits = platform.tenancy.limits
        try:
            limits.check_api(principal.tenant)
        finally:
            # on the 429 too: the caller learns its policy (sless.gateway.ratelimits)
            setattr(request.state, STATE_KEY, limits.api_headers(principal.tenant))
    return principal


PrincipalDep = Annotated[Principal, Depends(get_principal)]


async def get_namespace(ns: str, principal: PrincipalDep) -> str:
    if principal.namespace is None or ns != principal.namespace:
        raise NotFound(f"namespace {ns[:80]!r} not found")
    return ns


NamespaceDep = Annotated[str, Depends(get_namespace)]


def check_path_name(name: str) -> str:
    """A name from a path: a DNS-1123 label that fits every object (else 422)."""
    try:
        return check_name(name)
    except ValueError as e:
        raise Invalid(f"invalid name {name[:80]!r}: {e}") from None


async def get_name(name: str) -> str:
    return check_path_name(name)


#: the ``{name}`` of a path, checked once for every router
NameDep = Annotated[str, Depends(get_name)]


async def get_admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        # not 403: the admin API does not exist for tenants
        raise Unauthorized("this endpoint needs the provider admin token")
    return principal


AdminDep = Annotated[Principal, Depends(get_admin)]

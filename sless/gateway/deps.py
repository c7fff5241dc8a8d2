"""FastAPI dependencies as ``Annotated`` aliases.

Every service a route touches is a dependency of its own (``BackendDep``, ``QuotasDep``,
``FunctionsDep``...): the composition root (``sless.gateway.platform.Platform``) builds
them once, and only this module reads it, so a route's signature says what it reaches.

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

from sless.backends import Backend
from sless.config import Settings
from sless.errors import Invalid, NotFound, Unauthorized
from sless.events import Events
from sless.functions import FunctionServices
from sless.gateway.audit import stash_principal
from sless.gateway.idempotency import Idempotency
from sless.gateway.metrics import GatewayMetrics
from sless.gateway.paging import Pagers
from sless.gateway.platform import Platform
from sless.gateway.quota_usage import QuotaUsage
from sless.gateway.ratelimits import STATE_KEY
from sless.models import check_name
from sless.store import (
    AuditRepository,
    BlobStore,
    InvocationHistory,
    ReviewRepository,
    SecretRepository,
    VersionRepository,
)
from sless.tenancy import Principal, Quotas, Tenancy


def client_address(client: tuple[str, int] | None) -> str:
    return client[0] if client else "unknown"


def _platform(request: Request) -> Platform:
    """The composition root (``Platform.start``): only the getters below read it."""
    platform: Platform = request.app.state.platform
    return platform


# Each route names the few services it touches, one dependency each, so that its
# signature says what it reaches (no router imports or names ``Platform``).


def get_functions(request: Request) -> FunctionServices:
    """The function lifecycle's services (``sless.functions``), for its use cases."""
    return _platform(request).functions


def get_tenancy(request: Request) -> Tenancy:
    return _platform(request).tenancy


def get_quotas(request: Request) -> Quotas:
    return _platform(request).tenancy.quotas


def get_backend(request: Request) -> Backend:
    return _platform(request).backend


def get_secrets(request: Request) -> SecretRepository:
    return _platform(request).secrets


def get_events(request: Request) -> Events:
    return _platform(request).events


def get_idempotency(request: Request) -> Idempotency:
    return _platform(request).idempotency


def get_invocations(request: Request) -> InvocationHistory:
    return _platform(request).history


def get_versions(request: Request) -> VersionRepository:
    return _platform(request).versions


def get_reviews(request: Request) -> ReviewRepository:
    return _platform(request).reviews


def get_blobs(request: Request) -> BlobStore:
    return _platform(request).blobs


def get_audit_log(request: Request) -> AuditRepository:
    return _platform(request).audit


def get_metrics(request: Request) -> GatewayMetrics:
    return _platform(request).metrics


def get_pagers(request: Request) -> Pagers:
    return _platform(request).pagers


def get_quota_usage(request: Request) -> QuotaUsage:
    return _platform(request).quota_usage


def get_settings(request: Request) -> Settings:
    return _platform(request).settings


def get_public_url(request: Request) -> str:
    """The gateway's URL as callers reach it (a function's ``url``)."""
    return _platform(request).public_url


FunctionsDep = Annotated[FunctionServices, Depends(get_functions)]
TenancyDep = Annotated[Tenancy, Depends(get_tenancy)]
QuotasDep = Annotated[Quotas, Depends(get_quotas)]
BackendDep = Annotated[Backend, Depends(get_backend)]
SecretsDep = Annotated[SecretRepository, Depends(get_secrets)]
EventsDep = Annotated[Events, Depends(get_events)]
IdempotencyDep = Annotated[Idempotency, Depends(get_idempotency)]
InvocationsDep = Annotated[InvocationHistory, Depends(get_invocations)]
VersionsDep = Annotated[VersionRepository, Depends(get_versions)]
ReviewsDep = Annotated[ReviewRepository, Depends(get_reviews)]
BlobsDep = Annotated[BlobStore, Depends(get_blobs)]
AuditLogDep = Annotated[AuditRepository, Depends(get_audit_log)]
MetricsDep = Annotated[GatewayMetrics, Depends(get_metrics)]
PagersDep = Annotated[Pagers, Depends(get_pagers)]
QuotaUsageDep = Annotated[QuotaUsage, Depends(get_quota_usage)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
PublicUrlDep = Annotated[str, Depends(get_public_url)]


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def get_principal(request: Request, tenancy: TenancyDep) -> Principal:
    """The caller; failed attempts are limited per address, tenants per rate limit."""
    token = bearer_token(request.headers.get("authorization"))
    address = client_address(request.client)
    principal = await tenancy.authenticate_from(token, address)
    stash_principal(request, principal)  # before the limit: a refused call has an actor too
    if principal.tenant is not None:
        # the provider admin is not rate-limited: it is the operator of the platform
        limits = tenancy.limits
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

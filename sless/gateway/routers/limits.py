"""A tenant's own limits and its use of each (``GET /v1/limits``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from sless.errors import BadRequest
from sless.gateway.deps import PrincipalDep, QuotaUsageDep
from sless.gateway.schema import ERRORS

router = APIRouter(prefix="/v1", responses=ERRORS)


@router.get("/limits")
async def get_limits(principal: PrincipalDep, quota_usage: QuotaUsageDep) -> dict[str, Any]:
    """Every quota of the caller's tenant: ``limit``, ``used``, ``scope`` (``tenant`` or
    ``function``) and ``when_reached`` (``refused``: 403 ``quota_exceeded``; ``oldest
    dropped``). The provider sets them per tenant (``/v1/admin/tenants/{tenant}/limits``)."""
    if principal.namespace is None:
        raise BadRequest("the provider admin has no limits: see /v1/admin/tenants/{t}/limits")
    return await quota_usage.view(principal.namespace)

"""Provider-only API: onboarding tenants and managing their tokens."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from sless.functions import FunctionServices, reviewing, versioning
from sless.gateway.audit import note
from sless.gateway.deps import (
    AdminDep,
    BackendDep,
    FunctionsDep,
    IdempotencyDep,
    PagersDep,
    QuotaUsageDep,
    ReviewsDep,
    TenancyDep,
)
from sless.gateway.idempotency import HEADER as IDEMPOTENCY_KEY
from sless.gateway.idempotency import REPLAYED_HEADER
from sless.gateway.paging import PageDep
from sless.gateway.schema import ERRORS, page_model
from sless.models import TenantLimits, TenantName, namespace_for
from sless.tenancy import Principal

log = logging.getLogger(__name__)
#: a row id in a path: a positive PostgreSQL bigint (a larger number would overflow there
#: and answer 500; found by the fuzzer, tests/fuzz/)
RowId = Annotated[int, Path(ge=1, le=2**63 - 1)]

router = APIRouter(prefix="/v1/admin", responses=ERRORS)


class TenantCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: TenantName


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""


#: the namespace of the provider admin's Idempotency-Key records
_ADMIN_KEYS = ""


@router.post("/tenants", status_code=201)
async def create_tenant(
    body: TenantCreate,
    _admin: AdminDep,
    tenancy: TenancyDep,
    idempotency: IdempotencyDep,
    request: Request,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_KEY)] = None,
) -> JSONResponse:
    """Onboard a tenant; its first token is in the answer, once. With ``Idempotency-Key``
    a retry (the answer was lost) gets the same answer, token included, and onboards
    nothing; the stored answer is sealed with the key (``sless.gateway.idempotency``)."""
    note(request, target_namespace=namespace_for(body.name), target_name=body.name)

    async def work() -> tuple[int, Any]:
        created = await tenancy.onboard(body.name)
        return 201, {
            "tenant": created.tenant.name,
            "namespace": created.tenant.namespace,
            "token": created.token,
        }

    status, view, replayed = await idempotency.run(
        _ADMIN_KEYS, "onboard", idempotency_key, body.model_dump_json().encode(), work
    )
    response = JSONResponse(view, status_code=status)
    if replayed:
        response.headers[REPLAYED_HEADER] = "true"
    return response


@router.get("/tenants", response_model=page_model("TenantPage", "tenants", total=True))
async def list_tenants(
    _admin: AdminDep, tenancy: TenancyDep, pagers: PagersDep, page: PageDep
) -> dict[str, Any]:
    """In name order; ``total`` is exact."""
    tenants = await tenancy.tenants.list()
    pager = pagers.of("tenants", None, page)
    rows, fields = pager.page_by_name("tenants", tenants, lambda t: t.name)
    items = [
        {"tenant": t.name, "namespace": t.namespace, "created_at": t.created_at.isoformat()}
        for t in rows
    ]
    return {"tenants": items, **fields}


@router.delete("/tenants/{tenant}")
async def delete_tenant(
    tenant: str,
    _admin: AdminDep,
    tenancy: TenancyDep,
    backend: BackendDep,
    idempotency: IdempotencyDep,
    functions: FunctionsDep,
) -> dict[str, Any]:
    await tenancy.tenants.get(tenant)
    await backend.delete_namespace(namespace_for(tenant))
    await versioning.forget_namespace(functions, namespace_for(tenant))
    await backend.remove_tenant(tenant)
    await tenancy.tenants.delete(tenant)
    await idempotency.repository.delete_namespace(namespace_for(tenant))
    tenancy.forget_cached()
    return {"deleted": tenant}


@router.get("/tenants/{tenant}/limits")
async def get_tenant_limits(
    tenant: str, _admin: AdminDep, tenancy: TenancyDep, quota_usage: QuotaUsageDep
) -> dict[str, Any]:
    """The tenant's limits and use (as ``GET /v1/limits`` shows them to the tenant), and
    the limits set for it here (``own``)."""
    await tenancy.tenants.get(tenant)
    view = await quota_usage.view(namespace_for(tenant))
    return {**view, "own": await tenancy.quotas.overrides.get(tenant)}


@router.put("/tenants/{tenant}/limits")
async def put_tenant_limits(
    tenant: str,
    body: TenantLimits,
    _admin: AdminDep,
    tenancy: TenancyDep,
    quota_usage: QuotaUsageDep,
    request: Request,
) -> dict[str, Any]:
    """Set the tenant's own limits: the body replaces those set before; a limit left out
    (or null) follows the platform's ``SLESS_LIMITS_*``. Lowering one below the tenant's
    use refuses its next growth, and removes nothing (logs excepted: trimmed to fit)."""
    note(request, target_namespace=namespace_for(tenant), target_name=tenant)
    await tenancy.tenants.get(tenant)
    quotas = tenancy.quotas
    await quotas.overrides.put(tenant, body.overrides())
    quotas.forget(namespace_for(tenant))
    view = await quota_usage.view(namespace_for(tenant))
    return {**view, "own": body.overrides()}


@router.post("/tenants/{tenant}/tokens", status_code=201)
async def create_token(
    tenant: str,
    _admin: AdminDep,
    tenancy: TenancyDep,
    body: Annotated[TokenCreate | None, Body()] = None,
) -> dict[str, Any]:
    created = await tenancy.mint_token(tenant, (body or TokenCreate()).description)
    return {"id": created.row.id, "tenant": tenant, "token": created.token}


@router.get(
    "/tenants/{tenant}/tokens", response_model=page_model("TokenPage", "tokens", total=True)
)
async def list_tokens(
    tenant: str, _admin: AdminDep, tenancy: TenancyDep, pagers: PagersDep, page: PageDep
) -> dict[str, Any]:
    """In id order (the order they were made); ``total`` is exact."""
    await tenancy.tenants.get(tenant)
    tokens = await tenancy.tokens.list_for_tenant(tenant)
    pager = pagers.of("tokens", None, page, tenant=tenant)
    # ids as zero-padded strings: name order is id order
    rows, fields = pager.page_by_name("tokens", tokens, lambda r: f"{r.id:020d}")
    items = [
        {
            "id": r.id,
            "description": r.description,
            "created_at": r.created_at.isoformat(),
            "revoked_at": r.revoked_at.isoformat() if r.revoked_at else None,
        }
        for r in rows
    ]
    return {"tokens": items, **fields}


@router.delete("/tenants/{tenant}/tokens/{token_id}")
async def revoke_token(
    tenant: str, token_id: RowId, _admin: AdminDep, tenancy: TenancyDep, response: Response
) -> dict[str, Any]:
    await tenancy.tokens.revoke(tenant, token_id)
    tenancy.forget_cached()
    return {"revoked": token_id}


class ReviewDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(min_length=1, max_length=1000)


def _review_view(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **row,
        "created_at": row["created_at"].isoformat(),
        "decided_at": row["decided_at"].isoformat() if row["decided_at"] else None,
    }


@router.get("/reviews", response_model=page_model("ReviewPage", "reviews", total=False))
async def list_reviews(
    _admin: AdminDep,
    pagers: PagersDep,
    reviews: ReviewsDep,
    page: PageDep,
    state: Annotated[str | None, Query(max_length=20)] = "pending",
) -> dict[str, Any]:
    """Uploads held for review (``state=pending``, the default: oldest first), or all with
    ``state=all`` (newest first). Keyset pages by id; no ``total``."""
    wanted = None if state == "all" else state
    pager = pagers.of("reviews", None, page, state=wanted)
    position = pager.position()
    after = int(position[0]) if position else None
    rows = await reviews.list(wanted, after=after, limit=page.limit + 1)
    result = pager.page("reviews", rows, lambda r: [r["id"]])
    result["reviews"] = [_review_view(r) for r in result["reviews"]]
    return result


async def _decide(
    request: Request,
    functions: FunctionServices,
    admin: Principal,
    review_id: RowId,
    body: ReviewDecision,
    approve: bool,
) -> dict[str, Any]:
    note(request, detail=f"reason: {body.reason}")
    row = await reviewing.decide(
        functions,
        review_id,
        approve=approve,
        reason=body.reason,
        by=f"admin-token-{admin.token_id}",
    )
    note(request, target_namespace=row["namespace"], target_name=row["function"])
    log.info(
        "review %d of %s/%s %s by admin token %d",
        review_id,
        row["namespace"],
        row["function"],
        row["state"],
        admin.token_id,
    )
    return _review_view(row)


@router.post("/reviews/{review_id}/approve")
async def approve_review(
    review_id: RowId,
    body: ReviewDecision,
    admin: AdminDep,
    functions: FunctionsDep,
    request: Request,
) -> dict[str, Any]:
    return await _decide(request, functions, admin, review_id, body, approve=True)


@router.post("/reviews/{review_id}/reject")
async def reject_review(
    review_id: RowId,
    body: ReviewDecision,
    admin: AdminDep,
    functions: FunctionsDep,
    request: Request,
) -> dict[str, Any]:
    return await _decide(request, functions, admin, review_id, body, approve=False)

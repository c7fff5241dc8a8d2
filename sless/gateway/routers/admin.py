"""Provider-only API: onboarding tenants and managing their tokens."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel, ConfigDict

from sless.gateway.deps import AdminDep, PlatformDep
from sless.models import TenantName, namespace_for

router = APIRouter(prefix="/v1/admin")


class TenantCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: TenantName


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: str = ""


@router.post("/tenants", status_code=201)
async def create_tenant(
    body: TenantCreate, _admin: AdminDep, platform: PlatformDep
) -> dict[str, Any]:
    created = await platform.tenancy.onboard(body.name)
    return {
        "tenant": created.tenant.name,
        "namespace": created.tenant.namespace,
        "token": created.token,
    }


@router.get("/tenants")
async def list_tenants(_admin: AdminDep, platform: PlatformDep) -> dict[str, Any]:
    tenants = await platform.tenancy.tenants.list()
    items = [
        {"tenant": t.name, "namespace": t.namespace, "created_at": t.created_at.isoformat()}
        for t in tenants
    ]
    return {"tenants": items, "count": len(items)}


@router.delete("/tenants/{tenant}")
async def delete_tenant(tenant: str, _admin: AdminDep, platform: PlatformDep) -> dict[str, Any]:
    await platform.tenancy.tenants.get(tenant)
    await platform.backend.delete_namespace(namespace_for(tenant))
    await platform.tenancy.tenants.delete(tenant)
    platform.tenancy.forget_cached()
    return {"deleted": tenant}


@router.post("/tenants/{tenant}/tokens", status_code=201)
async def create_token(
    tenant: str,
    _admin: AdminDep,
    platform: PlatformDep,
    body: Annotated[TokenCreate | None, Body()] = None,
) -> dict[str, Any]:
    created = await platform.tenancy.mint_token(tenant, (body or TokenCreate()).description)
    return {"id": created.row.id, "tenant": tenant, "token": created.token}


@router.get("/tenants/{tenant}/tokens")
async def list_tokens(tenant: str, _admin: AdminDep, platform: PlatformDep) -> dict[str, Any]:
    await platform.tenancy.tenants.get(tenant)
    rows = await platform.tenancy.tokens.list_for_tenant(tenant)
    items = [
        {
            "id": r.id,
            "description": r.description,
            "created_at": r.created_at.isoformat(),
            "revoked_at": r.revoked_at.isoformat() if r.revoked_at else None,
        }
        for r in rows
    ]
    return {"tokens": items, "count": len(items)}


@router.delete("/tenants/{tenant}/tokens/{token_id}")
async def revoke_token(
    tenant: str, token_id: int, _admin: AdminDep, platform: PlatformDep, response: Response
) -> dict[str, Any]:
    await platform.tenancy.tokens.revoke(tenant, token_id)
    platform.tenancy.forget_cached()
    return {"revoked": token_id}

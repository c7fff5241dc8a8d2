"""Reading the audit log: a tenant its own namespace's log, the provider all of it.

A tenant's view is the rows of its namespace (``NamespaceDep``: another namespace is 404)
written since the tenant was created, so a tenant created again under a deleted tenant's
name never reads its predecessor's log. Reads are not audited themselves.

Paging: rows come newest first; when a page is full, ``next_before`` is the ``before`` to
pass for the next (older) page.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from sless.errors import NotFound
from sless.gateway.deps import AdminDep, NamespaceDep, PlatformDep, PrincipalDep
from sless.store import AuditRepository
from sless.store.audit import MAX_LIMIT

router = APIRouter(prefix="/v1")

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]
Before = Annotated[int | None, Query(ge=1)]
Action = Annotated[str | None, Query(max_length=100)]


def _page(rows: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    return {
        "entries": rows,
        "count": len(rows),
        "next_before": rows[-1]["id"] if len(rows) == limit else None,
    }


@router.get("/namespaces/{ns}/audit")
async def tenant_audit(
    ns: NamespaceDep,
    principal: PrincipalDep,
    platform: PlatformDep,
    action: Action = None,
    since: datetime | None = None,
    before: Before = None,
    limit: Limit = 100,
) -> dict[str, Any]:
    if principal.tenant is None:  # NamespaceDep admits tenants only; never reached
        raise NotFound("no audit log")
    created = (await platform.tenancy.tenants.get(principal.tenant)).created_at
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    rows = await AuditRepository(platform.db).list(
        namespace=ns,
        action=action,
        since=max(since, created) if since is not None else created,
        before=before,
        limit=limit,
    )
    return _page(rows, limit)


@router.get("/admin/audit")
async def admin_audit(
    _admin: AdminDep,
    platform: PlatformDep,
    namespace: Annotated[str | None, Query(max_length=100)] = None,
    tenant: Annotated[str | None, Query(max_length=100)] = None,
    action: Action = None,
    since: datetime | None = None,
    before: Before = None,
    limit: Limit = 100,
) -> dict[str, Any]:
    """Every row; ``namespace`` matches the log a row is in or the namespace it targets."""
    rows = await AuditRepository(platform.db).list(
        involving=namespace,
        tenant=tenant,
        action=action,
        since=since,
        before=before,
        limit=limit,
    )
    return _page(rows, limit)

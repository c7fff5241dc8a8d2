"""Reading the audit log: a tenant its own namespace's log, the provider all of it.

A tenant's view is the rows of its namespace (``NamespaceDep``: another namespace is 404)
written since the tenant was created, so a tenant created again under a deleted tenant's
name never reads its predecessor's log. Reads are not audited themselves.

Paging: rows come newest first (by id); ``next_cursor`` is the ``cursor`` of the next
(older) page (``sless.gateway.paging``). ``next_before``/``before`` (the id) stay for the
clients written before cursors. Filters: ``action``, ``actor`` (the kind: tenant, admin,
anonymous), ``subject`` (a cloud identity's subject), ``since`` (inclusive), ``until``
(exclusive). No ``total``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from sless.errors import NotFound
from sless.gateway.deps import (
    AdminDep,
    AuditLogDep,
    NamespaceDep,
    PagersDep,
    PrincipalDep,
    TenancyDep,
)
from sless.gateway.paging import PageDep, Pager
from sless.gateway.schema import ERRORS, page_model

router = APIRouter(prefix="/v1", responses=ERRORS)

Before = Annotated[int | None, Query(ge=1, description="older than this id (use cursor)")]
Action = Annotated[str | None, Query(max_length=100)]
Actor = Annotated[Literal["tenant", "admin", "anonymous"] | None, Query()]
Subject = Annotated[str | None, Query(max_length=200)]


def _aware(moment: datetime | None) -> datetime | None:
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


async def _page(
    audit_log: AuditLogDep, pager: Pager, before: int | None, **query: Any
) -> dict[str, Any]:
    position = pager.position()
    if position is not None:
        before = int(position[0])
    rows = await audit_log.list(before=before, limit=pager.params.limit + 1, **query)
    page = pager.page("entries", rows, lambda r: [r["id"]])
    page["next_before"] = page["entries"][-1]["id"] if page["next_cursor"] else None
    return page


@router.get(
    "/namespaces/{ns}/audit", response_model=page_model("AuditPage", "entries", total=False)
)
async def tenant_audit(
    ns: NamespaceDep,
    principal: PrincipalDep,
    tenancy: TenancyDep,
    audit_log: AuditLogDep,
    pagers: PagersDep,
    page: PageDep,
    action: Action = None,
    actor: Actor = None,
    subject: Subject = None,
    since: datetime | None = None,
    until: datetime | None = None,
    before: Before = None,
) -> dict[str, Any]:
    if principal.tenant is None:  # NamespaceDep admits tenants only; never reached
        raise NotFound("no audit log")
    created = (await tenancy.tenants.get(principal.tenant)).created_at
    since, until = _aware(since), _aware(until)
    filters: dict[str, Any] = {
        "action": action,
        "actor_kind": actor,
        "subject": subject,
        "since": max(since, created) if since is not None else created,
        "until": until,
    }
    pager = pagers.of("audit", ns, page, **filters)
    return await _page(audit_log, pager, before, namespace=ns, **filters)


@router.get("/admin/audit", response_model=page_model("AdminAuditPage", "entries", total=False))
async def admin_audit(
    _admin: AdminDep,
    audit_log: AuditLogDep,
    pagers: PagersDep,
    page: PageDep,
    namespace: Annotated[str | None, Query(max_length=100)] = None,
    tenant: Annotated[str | None, Query(max_length=100)] = None,
    action: Action = None,
    actor: Actor = None,
    subject: Subject = None,
    since: datetime | None = None,
    until: datetime | None = None,
    before: Before = None,
) -> dict[str, Any]:
    """Every row; ``namespace`` matches the log a row is in or the namespace it targets."""
    filters: dict[str, Any] = {
        "involving": namespace,
        "tenant": tenant,
        "action": action,
        "actor_kind": actor,
        "subject": subject,
        "since": since,
        "until": until,
    }
    pager = pagers.of("audit", None, page, **filters)
    return await _page(audit_log, pager, before, **filters)

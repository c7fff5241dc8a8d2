"""Tenant-facing management API: whoami, functions, validation reports, invocations (logs:
``logs``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request, Response

from sless.errors import BadRequest, Invalid
from sless.functions import specifying
from sless.gateway.audit import note
from sless.gateway.deps import (
    BackendDep,
    FunctionsDep,
    InvocationsDep,
    NameDep,
    NamespaceDep,
    PagersDep,
    PrincipalDep,
    PublicUrlDep,
    check_path_name,
)
from sless.gateway.paging import PageDep
from sless.gateway.preconditions import IfMatchDep, set_etag
from sless.gateway.schema import ERRORS, page_model, with_etag
from sless.models import Function, FunctionSpec

router = APIRouter(prefix="/v1", responses=ERRORS)


def function_view(function: Function, public_url: str) -> dict[str, Any]:
    data = function.model_dump(mode="json")
    data["url"] = f"{public_url}/fn/{function.namespace}/{function.name}"
    #: the current version (``spec.code.version``); ``status.version`` is the serving one
    data["version"] = function.spec.version
    return data


@router.get("/whoami")
async def whoami(principal: PrincipalDep) -> dict[str, Any]:
    if principal.is_admin:
        return {"tenant": None, "namespace": None, "admin": True}
    return {"tenant": principal.tenant, "namespace": principal.namespace}


@router.get(
    "/namespaces/{ns}/functions",
    response_model=page_model("FunctionPage", "functions", total=True),
)
async def list_functions(
    ns: NamespaceDep,
    backend: BackendDep,
    pagers: PagersDep,
    public_url: PublicUrlDep,
    page: PageDep,
) -> dict[str, Any]:
    """In name order; ``total`` is exact (the namespace's functions are few)."""
    functions = await backend.list_functions(ns)
    pager = pagers.of("functions", ns, page)
    items, fields = pager.page_by_name("functions", functions, lambda f: f.name)
    return {"functions": [function_view(f, public_url) for f in items], **fields}


@router.put("/namespaces/{ns}/functions/{name}", responses={**with_etag(200), **with_etag(201)})
async def put_function(
    ns: NamespaceDep,
    name: NameDep,
    public_url: PublicUrlDep,
    functions: FunctionsDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
    if_match: IfMatchDep,
    principal: PrincipalDep,
    request: Request,
) -> dict[str, Any]:
    """Create or replace the spec. A change of what runs (anything but ``traffic``) of a
    function that has code makes a new version; ``traffic`` names existing versions."""
    if "code" in body:
        raise Invalid("code is set by uploading a zip to .../upload, not in the spec")
    put = await specifying.put(
        functions,
        ns,
        name,
        FunctionSpec.model_validate(body),
        precondition=if_match,
        principal=principal,
        on_traffic_change=lambda detail: note(request, detail=detail),
    )
    response.status_code = 201 if put.created else 200
    function = put.function
    set_etag(response, function.resource_version)
    return function_view(function, public_url)


@router.get("/namespaces/{ns}/functions/{name}", responses=with_etag())
async def get_function(
    ns: NamespaceDep,
    name: NameDep,
    backend: BackendDep,
    public_url: PublicUrlDep,
    response: Response,
) -> dict[str, Any]:
    function = await backend.get_function(ns, name)
    set_etag(response, function.resource_version)
    return function_view(function, public_url)


@router.delete("/namespaces/{ns}/functions/{name}")
async def delete_function(
    ns: NamespaceDep, name: NameDep, functions: FunctionsDep, if_match: IfMatchDep
) -> dict[str, Any]:
    await specifying.delete(functions, ns, name, precondition=if_match)
    return {"deleted": name}


@router.get("/namespaces/{ns}/functions/{name}/validation")
async def get_validation(ns: NamespaceDep, name: NameDep, backend: BackendDep) -> dict[str, Any]:
    function = await backend.get_function(ns, name)
    if function.status.validation is None:
        return {"verdict": None, "findings": [], "message": "no upload validated yet"}
    return function.status.validation


StatusClass = Literal["2xx", "3xx", "4xx", "5xx"]
AsyncState = Literal["queued", "running", "succeeded", "failed", "dead", "interrupted"]


@router.get(
    "/namespaces/{ns}/invocations",
    response_model=page_model("InvocationPage", "invocations", total=False),
)
async def get_invocations(
    ns: NamespaceDep,
    pagers: PagersDep,
    invocations: InvocationsDep,
    page: PageDep,
    function: Annotated[str | None, Query(max_length=100)] = None,
    since: Annotated[datetime | None, Query(description="started at or after")] = None,
    until: Annotated[datetime | None, Query(description="started before")] = None,
    status: Annotated[StatusClass | None, Query(description="status class")] = None,
    state: Annotated[AsyncState | None, Query(description="async calls in this state")] = None,
) -> dict[str, Any]:
    """Newest first, by ``(started_at, id)``: a keyset page. No ``total`` (not cheap).

    Each record: ``id``, ``tenant``, ``namespace``, ``function``, ``version``,
    ``trigger``, ``status``, ``error``, ``reason``, ``started_at``, ``duration_ms``,
    ``request_bytes``, ``response_bytes``, and for a WebSocket session (status 101)
    ``request_messages`` and ``response_messages``, its messages each way (null for any
    other call)."""
    if function is not None:
        check_path_name(function)
    since, until = _aware(since), _aware(until)
    filters = {"function": function, "since": since, "until": until, "status": status}
    pager = pagers.of("invocations", ns, page, state=state, **filters)
    position = pager.position()
    after = None
    if position is not None:
        try:
            after = (datetime.fromisoformat(position[0]), uuid.UUID(position[1]))
        except (IndexError, TypeError, ValueError):
            raise BadRequest("invalid cursor") from None
    rows = await invocations.page(
        ns,
        function=function,
        since=since,
        until=until,
        status_class=status,
        async_state=state,
        after=after,
        limit=page.limit + 1,
    )
    result = pager.page("invocations", rows, lambda r: [r["started_at"].isoformat(), str(r["id"])])
    for row in result["invocations"]:
        row["id"] = str(row["id"])
        row["started_at"] = row["started_at"].isoformat()
    return result


def _aware(moment: datetime | None) -> datetime | None:
    """A time without a zone is UTC."""
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment

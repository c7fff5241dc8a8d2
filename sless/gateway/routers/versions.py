"""A function's versions and its rollback (the traffic split is a field of the spec).

``GET .../versions`` lists the immutable versions newest first (a keyset page on the
version number); ``POST .../rollback {"version": "v3"}`` makes v3 the current version
again, exactly as it was, with no traffic split, under the same ``If-Match`` precondition
and tenant write lock as every other write. Nothing is rebuilt: builds are cached by the
code's sha256 (embedded: the build directory; Kubernetes: the Function's
``status.builds``). Both are audited like every write (``function.rollback``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict

from sless.errors import BadRequest
from sless.functions import versioning
from sless.gateway.audit import note
from sless.gateway.deps import (
    BackendDep,
    FunctionsDep,
    NameDep,
    NamespaceDep,
    PagersDep,
    PublicUrlDep,
    VersionsDep,
)
from sless.gateway.paging import PageDep
from sless.gateway.preconditions import IfMatchDep, set_etag
from sless.gateway.routers.management import function_view
from sless.gateway.schema import ERRORS, page_model, with_etag
from sless.models import VersionName

router = APIRouter(prefix="/v1", responses=ERRORS)


@router.get(
    "/namespaces/{ns}/functions/{name}/versions",
    response_model=page_model("VersionPage", "versions", total=False),
)
async def list_versions(
    ns: NamespaceDep,
    name: NameDep,
    backend: BackendDep,
    pagers: PagersDep,
    versions: VersionsDep,
    page: PageDep,
) -> dict[str, Any]:
    """Newest first. Each version: ``version``, ``sha256``, ``spec``, ``validation``,
    ``state`` (allowed | held | rejected), ``created_by``, ``created_at``; ``current``
    marks the function's current version, ``serving`` the one that serves now."""
    function = await backend.get_function(ns, name)
    pager = pagers.of("versions", ns, page, function=name)
    position = pager.position()
    before = None
    if position is not None:
        try:
            before = int(position[0])
        except (IndexError, TypeError, ValueError):
            raise BadRequest("invalid cursor") from None
    rows = await versions.page(ns, name, before=before, limit=page.limit + 1)
    result = pager.page("versions", rows, lambda v: [int(v.version[1:])])
    traffic = {t.version: t.percent for t in function.spec.traffic}
    views = []
    for version in result["versions"]:
        view = version.model_dump(mode="json")
        view["current"] = version.version == function.spec.version
        view["serving"] = version.version == function.status.version
        view["percent"] = traffic.get(
            version.version, 100 if view["current"] and not traffic else 0
        )
        views.append(view)
    result["versions"] = views
    return result


class Rollback(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: VersionName


@router.post("/namespaces/{ns}/functions/{name}/rollback", responses=with_etag(200))
async def rollback(
    ns: NamespaceDep,
    name: NameDep,
    body: Rollback,
    public_url: PublicUrlDep,
    functions: FunctionsDep,
    request: Request,
    response: Response,
    if_match: IfMatchDep,
) -> dict[str, Any]:
    """Serve ``version`` again: the function's spec becomes that version's, its traffic
    split is cleared. 422 for a version that does not exist or may not serve."""
    note(request, detail=f"version: {body.version}")
    function = await versioning.rollback(functions, ns, name, body.version, precondition=if_match)
    set_etag(response, function.resource_version)
    return function_view(function, public_url)

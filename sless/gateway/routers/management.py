"""Tenant-facing management API: whoami, functions, validation reports, logs, invocations."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response
from fastapi.responses import PlainTextResponse

from sless.errors import Invalid
from sless.gateway.deps import NamespaceDep, PlatformDep, PrincipalDep
from sless.models import Function, FunctionSpec, check_name
from sless.store import list_invocations

router = APIRouter(prefix="/v1")


def _name(name: str) -> str:
    try:
        return check_name(name)
    except ValueError as e:
        raise Invalid(f"invalid name {name[:80]!r}: {e}") from None


def function_view(function: Function, public_url: str) -> dict[str, Any]:
    data = function.model_dump(mode="json")
    data["url"] = f"{public_url}/fn/{function.namespace}/{function.name}"
    return data


@router.get("/whoami")
async def whoami(principal: PrincipalDep) -> dict[str, Any]:
    if principal.is_admin:
        return {"tenant": None, "namespace": None, "admin": True}
    return {"tenant": principal.tenant, "namespace": principal.namespace}


@router.get("/namespaces/{ns}/functions")
async def list_functions(ns: NamespaceDep, platform: PlatformDep) -> dict[str, Any]:
    functions = await platform.backend.list_functions(ns)
    url = platform.public_url
    return {"functions": [function_view(f, url) for f in functions], "count": len(functions)}


@router.put("/namespaces/{ns}/functions/{name}")
async def put_function(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
) -> dict[str, Any]:
    _name(name)
    if "code" in body:
        raise Invalid("code is set by uploading a zip to .../upload, not in the spec")
    spec = FunctionSpec.model_validate(body)
    missing = await platform.secrets.missing(ns, spec.secret_names())
    if missing:
        # a name only (no value exists to leak); always looked up in the caller's namespace
        raise Invalid(f"secret {missing[0]!r} not found in namespace {ns}: create it first")
    quotas = platform.tenancy.quotas
    # count, check and write as the tenant's only writer: concurrent creates cannot all
    # see the last free slot (sless/tenancy/quotas.py)
    async with quotas.guard(ns):
        current = await platform.backend.list_functions(ns)
        quotas.check_function(current, name, spec)
        response.status_code = 200 if any(f.name == name for f in current) else 201
        function = await platform.backend.put_function(ns, name, spec)
    return function_view(function, platform.public_url)


@router.get("/namespaces/{ns}/functions/{name}")
async def get_function(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    function = await platform.backend.get_function(ns, _name(name))
    return function_view(function, platform.public_url)


@router.delete("/namespaces/{ns}/functions/{name}")
async def delete_function(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    await platform.backend.delete_function(ns, _name(name))
    return {"deleted": name}


@router.get("/namespaces/{ns}/functions/{name}/validation")
async def get_validation(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    function = await platform.backend.get_function(ns, _name(name))
    if function.status.validation is None:
        return {"verdict": None, "findings": [], "message": "no upload validated yet"}
    return function.status.validation


@router.get("/namespaces/{ns}/functions/{name}/logs", response_class=PlainTextResponse)
async def get_logs(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    tail: Annotated[int, Query(ge=1, le=1024 * 1024)] = 64 * 1024,
) -> str:
    return await platform.backend.logs(ns, _name(name), tail_bytes=tail)


@router.get("/namespaces/{ns}/invocations")
async def get_invocations(
    ns: NamespaceDep,
    platform: PlatformDep,
    function: str | None = None,
    since: datetime | None = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    if function is not None:
        _name(function)
    rows = await list_invocations(platform.db, ns, function=function, since=since, limit=limit)
    for row in rows:
        row["id"] = str(row["id"])
        row["started_at"] = row["started_at"].isoformat()
    return {"invocations": rows, "count": len(rows)}

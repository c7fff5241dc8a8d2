"""The upload endpoint: the body read within its limit, the upload use case
(``sless.functions.uploading``: validated before anything is stored or built) run once
per ``Idempotency-Key``.
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse

from sless.errors import PayloadTooLarge
from sless.functions import uploading, versioning
from sless.gateway.audit import note
from sless.gateway.deps import (
    FunctionsDep,
    IdempotencyDep,
    NameDep,
    NamespaceDep,
    PrincipalDep,
    SettingsDep,
)
from sless.gateway.idempotency import HEADER as IDEMPOTENCY_KEY
from sless.gateway.idempotency import REPLAYED_HEADER, check_key
from sless.gateway.schema import ERRORS

router = APIRouter(prefix="/v1", responses=ERRORS)


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the upload is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the upload is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post("/namespaces/{ns}/functions/{name}/upload", status_code=202)
async def upload(
    ns: NamespaceDep,
    name: NameDep,
    request: Request,
    idempotency: IdempotencyDep,
    settings: SettingsDep,
    functions: FunctionsDep,
    principal: PrincipalDep,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_KEY)] = None,
    traffic: Annotated[
        int | None,
        Query(
            ge=0,
            le=100,
            description="percent of calls for the new version; the previous version gets "
            "the rest (a canary). Unset: the new version gets every call.",
        ),
    ] = None,
) -> JSONResponse:
    """Upload the function's code (a zip). Code that passes validation (or is held for
    review) becomes the function's next version (``v1``, ``v2``...) and its current one;
    the same code again makes no version (and ``traffic`` is not applied).
    With ``Idempotency-Key`` a retry of the same upload answers as the first did without
    validating or building again; a rejected or failed upload keeps no record (a retry
    does the work)."""
    check_key(idempotency_key)  # both before reading 50 MB
    if traffic is not None:
        note(request, detail=f"traffic: {traffic}% to the new version")
    function = await functions.backend.get_function(ns, name)
    data = await read_body(request, settings.gateway.max_upload_bytes)
    status, body, replayed = await idempotency.run(
        ns,
        "upload",
        idempotency_key,
        f"{ns}\0{name}\0{traffic}\0".encode() + hashlib.sha256(data).digest(),
        lambda: uploading.upload(
            functions, function, data, traffic, versioning.actor_of(principal)
        ),
    )
    response = JSONResponse(body, status_code=status)
    if replayed:
        response.headers[REPLAYED_HEADER] = "true"
    return response

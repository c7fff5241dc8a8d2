"""The upload endpoint: a zip in, validated before anything is stored or built.

Order matters for "nothing lost, nothing left behind": the archive is validated in a
scratch directory (removed afterwards), the blob is stored only for code that passed and
fits the tenant's stored-code quota (checked before validation, and again under the
tenant's lock right before the blob is stored), and only then does the function point at
the new code. A rejected upload changes nothing but the function's last validation
report; the previous version keeps serving.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse

from sless.errors import PayloadTooLarge, ValidationRejected
from sless.gateway import versioning
from sless.gateway.audit import note
from sless.gateway.deps import NameDep, NamespaceDep, PlatformDep, PrincipalDep
from sless.gateway.idempotency import HEADER as IDEMPOTENCY_KEY
from sless.gateway.idempotency import REPLAYED_HEADER, check_key
from sless.gateway.platform import Platform
from sless.gateway.schema import ERRORS
from sless.models import CodeRef, Function, Phase
from sless.validation import Detonation, Report, Verdict

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


async def validate_upload(
    platform: Platform, function: Function, data: bytes, sha256: str
) -> Report:
    spec = function.spec
    detonation = Detonation.from_spec(spec)
    cache_key = (
        f"{spec.runtime.value}:{spec.entrypoint}:{platform.validator.fingerprint}:{detonation.key}"
    )
    cached = await platform.reports.get(sha256, cache_key)
    if cached is not None:
        report = Report.model_validate(cached)
        platform.metrics.record_validation(report, cached=True)
        return report
    scratch = Path(tempfile.mkdtemp(prefix="sless-upload-"))
    try:
        report = await platform.validator.validate_archive(
            data,
            scratch / "code",
            sha256=sha256,
            runtime=spec.runtime.value,
            entrypoint=spec.entrypoint,
            detonation=detonation,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    platform.metrics.record_validation(report, cached=False)
    if not any(stage.status == "error" for stage in report.stages):
        # an error (semgrep crashed, the LLM timed out) must be retried, not remembered
        await platform.reports.put(
            sha256, cache_key, report.verdict.value, report.model_dump(mode="json")
        )
    return report


@router.post("/namespaces/{ns}/functions/{name}/upload", status_code=202)
async def upload(
    ns: NamespaceDep,
    name: NameDep,
    request: Request,
    platform: PlatformDep,
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
    await platform.backend.get_function(ns, name)
    data = await read_body(request, platform.settings.gateway.max_upload_bytes)
    status, body, replayed = await platform.idempotency.run(
        ns,
        "upload",
        idempotency_key,
        f"{ns}\0{name}\0{traffic}\0".encode() + hashlib.sha256(data).digest(),
        lambda: _upload(platform, ns, name, data, traffic, versioning.actor_of(principal)),
    )
    response = JSONResponse(body, status_code=status)
    if replayed:
        response.headers[REPLAYED_HEADER] = "true"
    return response


async def _upload(
    platform: Platform, ns: str, name: str, data: bytes, traffic: int | None, actor: str
) -> tuple[int, Any]:
    function = await platform.backend.get_function(ns, name)
    sha256 = hashlib.sha256(data).hexdigest()
    code = function.spec.code
    if code is not None and code.sha256 == sha256 and function.status.phase is not Phase.FAILED:
        # the same code again: nothing to validate, store or build
        same = {"sha256": sha256, "phase": function.status.phase.value, "unchanged": True}
        return 202, {**same, "version": code.version}
    quotas = platform.tenancy.quotas
    # refused early, before validation work, then checked again under the tenant's lock
    early = await quotas.of(ns)
    early.check_code(await platform.backend.list_functions(ns), name, len(data))
    report = await validate_upload(platform, function, data, sha256)
    summary = report.model_dump(mode="json")
    if report.verdict is Verdict.REJECT:
        await platform.backend.record_validation(ns, name, summary)
        raise ValidationRejected(
            f"the upload was rejected by validation ({len(report.findings)} findings)",
            details=summary,
        )
    held = report.verdict is Verdict.REVIEW
    async with quotas.guard(ns) as quota:
        current = await platform.backend.list_functions(ns)
        quota.check_code(current, name, len(data))
        function = next((f for f in current if f.name == name), function)
        version = await platform.versions.next_version(ns, name)
        split = versioning.upload_traffic(function.spec.version, version, traffic)
        key = await platform.blobs.put(sha256, data)
        code = CodeRef(sha256=sha256, blob_key=key, size=len(data), version=version)
        # the version first: a function never points at a version that is not recorded
        await platform.versions.create(
            ns,
            name,
            version,
            function.spec.model_copy(update={"code": code}),
            validation=summary,
            state=versioning.state_of(held),
            created_by=actor,
        )
        updated = await platform.backend.set_code(
            ns, name, code, held=held, validation=summary, traffic=split
        )
        await versioning.prune(platform, ns, name, updated.spec, function.status.version)
    body: dict[str, Any] = {
        "sha256": sha256,
        "phase": updated.status.phase.value,
        "verdict": report.verdict.value,
        "version": version,
    }
    if report.verdict is Verdict.REVIEW:
        body["review_id"] = await platform.reviews.open(ns, name, sha256, summary)
    return 202, body

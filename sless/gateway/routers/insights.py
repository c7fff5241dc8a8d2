"""What the console reads beyond the resources: statistics and a held upload's files.

- ``GET /v1/namespaces/{ns}/stats/invocations``: a tenant's invocations per time bucket
  (count, errors, p50/p99 latency), optionally for one function: the latency chart.
- ``GET /v1/admin/stats``: the whole platform's invocations and validation verdicts per
  bucket: the provider's health page.
- ``GET /v1/admin/reviews/{id}/files``: the files of a held upload that its findings
  name, so a reviewer reads the flagged lines before approving.
- ``GET /v1/namespaces/{ns}/functions/{name}/validation/files``: the same for a tenant's
  own function, when the last report is about the stored code (a rejected upload is
  never stored, so its findings have no file to show).

The held upload's archive is read in memory, never extracted: only members that a
finding names are read, each at most ``MAX_FILE_BYTES`` (a member's declared size is not
trusted: the read itself is bounded), and the listing stops at ``MAX_LISTED`` members.
The code is returned as text for the console to show with ``textContent``; the API does
not interpret it.
"""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query

from sless.errors import Invalid, NotFound
from sless.gateway.deps import (
    AdminDep,
    BackendDep,
    BlobsDep,
    InvocationsDep,
    NamespaceDep,
    ReviewsDep,
    check_path_name,
)
from sless.gateway.schema import ERRORS

router = APIRouter(prefix="/v1", responses=ERRORS)

MAX_FILE_BYTES = 256 * 1024
MAX_LISTED = 500
MAX_BUCKETS = 1000

Window = Annotated[int, Query(ge=60, le=7 * 24 * 3600, description="seconds back from now")]
Step = Annotated[int, Query(ge=10, le=24 * 3600, description="seconds per bucket")]


def _since(window_s: int, step_s: int) -> datetime:
    if window_s // step_s > MAX_BUCKETS:
        raise Invalid(f"window_s / step_s is at most {MAX_BUCKETS} buckets")
    return datetime.now(UTC) - timedelta(seconds=window_s)


@router.get("/namespaces/{ns}/stats/invocations")
async def tenant_invocation_stats(
    ns: NamespaceDep,
    invocations: InvocationsDep,
    function: str | None = None,
    window_s: Window = 3600,
    step_s: Step = 60,
) -> dict[str, Any]:
    """Invocations per bucket: ``count``, ``errors`` (5xx or failed), ``p50_ms``, ``p99_ms``."""
    since = _since(window_s, step_s)
    buckets = await invocations.buckets(
        since=since,
        step_s=step_s,
        namespace=ns,
        function=check_path_name(function) if function is not None else None,
    )
    return {"since": since.isoformat(), "step_s": step_s, "buckets": buckets}


@router.get("/admin/stats")
async def platform_stats(
    _admin: AdminDep, invocations: InvocationsDep, window_s: Window = 3600, step_s: Step = 60
) -> dict[str, Any]:
    """All tenants' invocations per bucket, and validation verdicts per bucket."""
    since = _since(window_s, step_s)
    return {
        "since": since.isoformat(),
        "step_s": step_s,
        "invocations": await invocations.buckets(since=since, step_s=step_s),
        "validations": await invocations.verdict_buckets(since=since, step_s=step_s),
    }


def _read_bounded(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> tuple[str, bool]:
    with archive.open(member) as stream:
        data = stream.read(MAX_FILE_BYTES + 1)
    return data[:MAX_FILE_BYTES].decode("utf-8", "replace"), len(data) > MAX_FILE_BYTES


def flagged_files(data: bytes, findings: list[dict[str, Any]]) -> dict[str, Any]:
    """The archive's members (names, sizes) and the text of those a finding names."""
    lines: dict[str, set[int]] = {}
    for finding in findings:
        if finding.get("file"):
            lines.setdefault(str(finding["file"]), set())
            if isinstance(finding.get("line"), int):
                lines[str(finding["file"])].add(finding["line"])
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise NotFound("the held upload is not a readable zip") from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        files = []
        for member in members[:MAX_LISTED]:
            item: dict[str, Any] = {"path": member.filename, "size": member.file_size}
            if member.filename in lines:
                text, truncated = _read_bounded(archive, member)
                item.update(
                    flagged=True,
                    lines=sorted(lines[member.filename]),
                    text=text,
                    truncated=truncated,
                )
            files.append(item)
    return {"files": files, "count": len(members), "listed": len(files)}


@router.get("/admin/reviews/{review_id}/files")
async def review_files(
    review_id: int, _admin: AdminDep, reviews: ReviewsDep, blobs: BlobsDep
) -> dict[str, Any]:
    """The held upload's files; those its findings name come with their text and lines."""
    review = await reviews.get(review_id)
    if not await blobs.exists(review["sha256"]):
        raise NotFound(f"the code of review {review_id} is no longer stored")
    data = await blobs.get(review["sha256"])
    findings = review["report"].get("findings") or []
    return {"review_id": review_id, "sha256": review["sha256"], **flagged_files(data, findings)}


@router.get("/namespaces/{ns}/functions/{name}/validation/files")
async def validation_files(
    ns: NamespaceDep, name: str, backend: BackendDep, blobs: BlobsDep
) -> dict[str, Any]:
    """The function's stored code; the files its last report names come with their text."""
    function = await backend.get_function(ns, check_path_name(name))
    report = function.status.validation
    code = function.spec.code
    if report is None or code is None or report.get("sha256") != code.sha256:
        raise NotFound("the last validated upload is not stored (a rejected upload never is)")
    if not await blobs.exists(code.sha256):
        raise NotFound("the function's code is no longer stored")
    data = await blobs.get(code.sha256)
    findings = report.get("findings") or []
    return {"sha256": code.sha256, **flagged_files(data, findings)}

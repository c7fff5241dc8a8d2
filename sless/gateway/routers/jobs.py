"""Jobs (run a function once per new ``run_id``) and the status of one invocation.

``PUT .../jobs/{name}`` with a higher ``run_id`` starts exactly one run; the same
``run_id`` again starts nothing; a lower one is refused with 409 (runs only move forward).
``GET .../invocations/{id}`` answers for any invocation: a direct call, a cron tick, a job
run, or an asynchronous call (then with its queue state, attempts and result).
"""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from sless.errors import NotFound
from sless.gateway.deps import (
    BackendDep,
    EventsDep,
    IdempotencyDep,
    InvocationsDep,
    NameDep,
    NamespaceDep,
    PagersDep,
    QuotasDep,
)
from sless.gateway.idempotency import HEADER as IDEMPOTENCY_KEY
from sless.gateway.idempotency import REPLAYED_HEADER
from sless.gateway.paging import PageDep
from sless.gateway.preconditions import IfMatchDep, set_etag
from sless.gateway.schema import ERRORS, page_model, with_etag
from sless.gateway.support import current_version, require_function
from sless.models import FunctionJob, JobSpec

router = APIRouter(prefix="/v1", responses=ERRORS)


def job_view(job: FunctionJob) -> dict[str, Any]:
    data: dict[str, Any] = job.model_dump(mode="json")
    return data


@router.get("/namespaces/{ns}/jobs", response_model=page_model("JobPage", "jobs", total=True))
async def list_jobs(
    ns: NamespaceDep, backend: BackendDep, pagers: PagersDep, page: PageDep
) -> dict[str, Any]:
    """In name order; ``total`` is exact."""
    jobs = await backend.list_jobs(ns)
    items, fields = pagers.of("jobs", ns, page).page_by_name("jobs", jobs, lambda j: j.name)
    return {"jobs": [job_view(j) for j in items], **fields}


@router.put("/namespaces/{ns}/jobs/{name}", responses={**with_etag(200), **with_etag(201)})
async def put_job(
    ns: NamespaceDep,
    name: NameDep,
    quotas: QuotasDep,
    backend: BackendDep,
    idempotency: IdempotencyDep,
    events: EventsDep,
    body: Annotated[dict[str, Any], Body()],
    if_match: IfMatchDep,
    idempotency_key: Annotated[str | None, Header(alias=IDEMPOTENCY_KEY)] = None,
) -> JSONResponse:
    """Create or change a job; a higher ``run_id`` starts a run. With ``Idempotency-Key``
    a retry of the same request answers as the first did and starts nothing."""
    spec = JobSpec.model_validate(body)

    async def work() -> tuple[int, Any]:
        await require_function(backend, ns, spec.function)
        async with quotas.guard(ns) as quota:
            if if_match is not None:
                if_match.check(await current_version(backend, "job", ns, name))
            quota.check_new("jobs", [j.name for j in await backend.list_jobs(ns)], name)
            job, created = await backend.put_job(ns, name, spec)
        events.job_changed()
        return (201 if created else 200), job_view(job)

    request_body = json.dumps([ns, name, body], sort_keys=True).encode()
    status, view, replayed = await idempotency.run(
        ns, "put_job", idempotency_key, request_body, work
    )
    response = JSONResponse(view, status_code=status)
    if replayed:
        response.headers[REPLAYED_HEADER] = "true"
    set_etag(response, view.get("resource_version") if isinstance(view, dict) else None)
    return response


@router.get("/namespaces/{ns}/jobs/{name}", responses=with_etag())
async def get_job(
    ns: NamespaceDep, name: NameDep, backend: BackendDep, response: Response
) -> dict[str, Any]:
    job = await backend.get_job(ns, name)
    set_etag(response, job.resource_version)
    return job_view(job)


@router.get("/namespaces/{ns}/jobs/{name}/logs", response_class=PlainTextResponse)
async def get_job_logs(
    ns: NamespaceDep,
    name: NameDep,
    backend: BackendDep,
    tail: Annotated[int, Query(ge=1, le=1024 * 1024)] = 64 * 1024,
) -> str:
    """The recent output of the job's function (its runs and its other calls)."""
    job = await backend.get_job(ns, name)
    return await backend.logs(ns, job.spec.function, tail_bytes=tail)


@router.delete("/namespaces/{ns}/jobs/{name}")
async def delete_job(
    ns: NamespaceDep, name: NameDep, quotas: QuotasDep, backend: BackendDep, if_match: IfMatchDep
) -> dict[str, Any]:
    async with quotas.guard(ns):
        if if_match is not None:
            if_match.check(await current_version(backend, "job", ns, name))
        await backend.delete_job(ns, name)
    return {"deleted": name}


def _result(body: bytes | None, content_type: str | None, truncated: bool) -> Any:
    if body is None:
        return None
    text = bytes(body).decode("utf-8", "replace")
    if not truncated and content_type and content_type.startswith("application/json"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


@router.get("/namespaces/{ns}/invocations/{invocation_id}")
async def get_invocation_status(
    ns: NamespaceDep, invocation_id: str, invocations: InvocationsDep
) -> dict[str, Any]:
    try:
        key = uuid.UUID(invocation_id)
    except ValueError:
        raise NotFound("invocation not found") from None
    queued = await invocations.queued(ns, key)
    try:
        record: dict[str, Any] | None = await invocations.get(ns, key)
    except NotFound:
        if queued is None:
            raise
        record = None
    view: dict[str, Any] = {"id": str(key), "namespace": ns}
    if record is not None:
        view.update(
            function=record["function"],
            trigger=record["trigger"],
            status=record["status"],
            error=record["error"],
            reason=record["reason"],
            duration_ms=record["duration_ms"],
            started_at=record["started_at"].isoformat(),
            state="succeeded" if record["status"] < 400 else "failed",
            version=record["version"],
        )
    if queued is not None:
        view.update(
            function=queued["function"],
            trigger="async",
            state=queued["state"],
            status=queued["status"],
            attempts=queued["attempts"],
            max_attempts=queued["max_attempts"],
            result=_result(queued["result"], queued["content_type"], queued["result_truncated"]),
            result_truncated=queued["result_truncated"],
            message=queued["error"],
            created_at=queued["created_at"].isoformat(),
            next_attempt_at=(
                queued["next_attempt_at"].isoformat() if queued["state"] == "queued" else None
            ),
            finished_at=queued["finished_at"].isoformat() if queued["finished_at"] else None,
            # how the function's callback_url was told (sless.events.callbacks), if it was
            callback=queued["callback"],
        )
    return view

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

from fastapi import APIRouter, Body, Query, Response
from fastapi.responses import PlainTextResponse

from sless.errors import NotFound
from sless.gateway.deps import NamespaceDep, PlatformDep
from sless.gateway.routers.triggers import path_name, require_function
from sless.models import FunctionJob, JobSpec
from sless.store import QueueRepository, get_invocation

router = APIRouter(prefix="/v1")


def job_view(job: FunctionJob) -> dict[str, Any]:
    data: dict[str, Any] = job.model_dump(mode="json")
    return data


@router.get("/namespaces/{ns}/jobs")
async def list_jobs(ns: NamespaceDep, platform: PlatformDep) -> dict[str, Any]:
    jobs = await platform.backend.list_jobs(ns)
    return {"jobs": [job_view(j) for j in jobs], "count": len(jobs)}


@router.put("/namespaces/{ns}/jobs/{name}")
async def put_job(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
) -> dict[str, Any]:
    path_name(name)
    spec = JobSpec.model_validate(body)
    await require_function(platform, ns, spec.function)
    job, created = await platform.backend.put_job(ns, name, spec)
    platform.events.job_changed()
    response.status_code = 201 if created else 200
    return job_view(job)


@router.get("/namespaces/{ns}/jobs/{name}")
async def get_job(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    return job_view(await platform.backend.get_job(ns, path_name(name)))


@router.get("/namespaces/{ns}/jobs/{name}/logs", response_class=PlainTextResponse)
async def get_job_logs(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    tail: Annotated[int, Query(ge=1, le=1024 * 1024)] = 64 * 1024,
) -> str:
    """The recent output of the job's function (its runs and its other calls)."""
    job = await platform.backend.get_job(ns, path_name(name))
    return await platform.backend.logs(ns, job.spec.function, tail_bytes=tail)


@router.delete("/namespaces/{ns}/jobs/{name}")
async def delete_job(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    await platform.backend.delete_job(ns, path_name(name))
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
    ns: NamespaceDep, invocation_id: str, platform: PlatformDep
) -> dict[str, Any]:
    try:
        key = uuid.UUID(invocation_id)
    except ValueError:
        raise NotFound("invocation not found") from None
    queued = await QueueRepository(platform.db).get(ns, key)
    try:
        record: dict[str, Any] | None = await get_invocation(platform.db, ns, key)
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
            duration_ms=record["duration_ms"],
            started_at=record["started_at"].isoformat(),
            state="succeeded" if record["status"] < 400 else "failed",
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

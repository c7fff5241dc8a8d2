"""FunctionJob: each new ``run_id`` runs the function once, as one Kubernetes Job.

- ``run_id`` 0: nothing runs (a job defined but never started).
- A ``run_id`` greater than ``status.run_id`` is new: one Job named after (job, run_id) is
  created; the deterministic name makes a second create a 409, so a run id whose status
  update was lost (operator restart) is recognised, never run again.
- A ``run_id`` not greater than ``status.run_id`` never runs (same or older run).
- The Job's pod POSTs the payload to the function through the gateway; the response body is
  its termination message, recorded as ``status.result`` when the Job ends.
- The function must be Ready: until then the run waits (``Waiting``, retried).
"""

from __future__ import annotations

from typing import Any

import kopf
from pydantic import ValidationError

from sless.errors import SlessError
from sless.kube import collection_path, object_path
from sless.models import FunctionResourceSpec, JobPhase, JobSpec, Phase
from sless.operator.building import job_state
from sless.operator.failing import cluster_failure, failed_status
from sless.operator.run_endings import run_failure
from sless.operator.state import Operator, now, with_owner
from sless.policies import check_pod_spec, function_job, labels, sandbox_runtime_class

KIND = "FunctionJob"
MAX_RESULT = 4096


async def reconcile(op: Operator, body: dict[str, Any]) -> None:
    meta = body["metadata"]
    ns, name = meta["namespace"], meta["name"]
    async with op.locked(KIND, ns, name):
        fresh = await op.api.get(op.cr_path(KIND, ns, name))
        if fresh is None or fresh["metadata"].get("deletionTimestamp"):
            return
        status: dict[str, Any] = dict(fresh.get("status") or {})
        try:
            spec = JobSpec.model_validate(fresh.get("spec") or {})
        except ValidationError as e:
            message = f"invalid job: {str(e)[:500]}"
            await op.patch_status(KIND, ns, name, status, {"phase": "Failed", "message": message})
            raise kopf.PermanentError(message) from e
        last = status.get("run_id")
        if spec.run_id == 0:
            if last is None:
                await op.patch_status(KIND, ns, name, status, {"phase": JobPhase.IDLE.value})
            return
        if isinstance(last, int) and spec.run_id <= last:
            return  # this run (or a later one) already started: never twice
        job_name = labels.function_job_name(name, spec.run_id)
        if await op.api.get(object_path("batch/v1", "Job", ns, job_name)) is None:
            await _start_run(op, fresh, spec, status)
        await op.patch_status(
            KIND,
            ns,
            name,
            status,
            {
                "phase": JobPhase.RUNNING.value,
                "message": "",
                "run_id": spec.run_id,
                "job_name": job_name,
                "result": None,
                "started_at": now(),
                "completed_at": None,
            },
        )


async def _start_run(
    op: Operator, fresh: dict[str, Any], spec: JobSpec, status: dict[str, Any]
) -> None:
    """Create the Job of run ``spec.run_id`` once the function serves an image."""
    meta = fresh["metadata"]
    ns, name = meta["namespace"], meta["name"]
    k = op.settings.kubernetes
    target = await op.api.get(op.cr_path("Function", ns, spec.function))
    ready = target is not None and (target.get("status") or {}).get("image")
    if not ready or target is None:
        await op.patch_status(
            KIND,
            ns,
            name,
            status,
            {
                "phase": JobPhase.WAITING.value,
                "message": f"waiting for function {spec.function} to be {Phase.READY}",
            },
        )
        raise kopf.TemporaryError("function not ready", delay=k.retry_delay_s)
    timeout_s = FunctionResourceSpec.model_validate(target.get("spec") or {}).timeout_s
    job = function_job(
        name,
        spec.function,
        spec.run_id,
        spec.payload,
        ns,
        op.invoke_base_url(),
        timeout_s,
        k,
    )
    violations = check_pod_spec(
        job["spec"]["template"]["spec"], runtime_class=sandbox_runtime_class(k)
    )
    if violations:
        message = "rendered Job violates policy: " + "; ".join(map(str, violations[:5]))
        await op.patch_status(KIND, ns, name, status, {"phase": "Failed", "message": message})
        raise kopf.PermanentError(message)
    try:
        await op.api.create(with_owner(job, fresh))
    except SlessError as e:
        raise await cluster_failure(
            e,
            refused="the cluster refused the Job",
            failed="creating the Job failed",
            delay=5,
            record=failed_status(op, KIND, ns, name, status),
        ) from e


async def record_completion(op: Operator, job: dict[str, Any]) -> None:
    """A FunctionJob's Job ended: its phase and result (the pod's termination message)."""
    meta = job["metadata"]
    owner = (meta.get("labels") or {}).get(labels.FUNCTION_JOB)
    state = job_state(job)
    if not owner or state == "running":
        return
    ns = meta["namespace"]
    async with op.locked(KIND, ns, owner):
        body = await op.api.get(op.cr_path(KIND, ns, owner))
        if body is None:
            return
        status: dict[str, Any] = dict(body.get("status") or {})
        if status.get("job_name") != meta["name"] or status.get("completed_at"):
            return
        result = None
        pods = await op.api.list(collection_path("v1", "Pod", ns), f"job-name={meta['name']}")
        for pod in pods:
            for container in (pod.get("status") or {}).get("containerStatuses") or []:
                terminated = (container.get("state") or {}).get("terminated") or {}
                if terminated.get("message"):
                    result = str(terminated["message"])[:MAX_RESULT]
        phase = JobPhase.SUCCEEDED if state == "succeeded" else JobPhase.FAILED
        await op.patch_status(
            KIND,
            ns,
            owner,
            status,
            {
                "phase": phase.value,
                "result": result,
                "completed_at": now(),
                "message": "" if phase is JobPhase.SUCCEEDED else run_failure(job, pods),
            },
        )

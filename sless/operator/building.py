"""A function's code → its image: one kaniko build Job per sha256, pinned by digest.

- Idempotent builds: the Job's name is a function of (namespace, function, sha256) and
  ``status.builds`` records every sha256 built (→ pinned image). A sha256 in ``builds`` is
  never built again; a sha256 whose Job exists (running, succeeded or failed) never gets a
  second Job. A failed build stays Failed until its Job is deleted by an admin: no rebuild
  loop is possible.
- Digest: kaniko writes the pushed image's digest to ``/dev/termination-log``
  (``--digest-file``), i.e. the build container's termination message; the operator reads
  it from the Job's pod. Where the pod is gone, a ``sless.kube5s.ru/digest`` annotation on
  the Job (only the operator and cluster admins can write Jobs in the builds namespace) is
  used instead.
"""

from __future__ import annotations

import re
from typing import Any

import kopf

from sless.errors import SlessError
from sless.kube import answer_of, collection_path, object_path
from sless.models import FunctionSpec, Phase, Runtime
from sless.operator.contexts import ContextError
from sless.operator.function_status import KIND, fail, plain
from sless.operator.state import Operator, condition
from sless.policies import build_job, check_build_job, image_repository, labels

_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# The lines of a build log that say what failed (kaniko's, pip's, npm's, a RUN step's).
_FAILING = re.compile(r"(?i)\b(error|errors|failed|failure|fatal|panic|not found|no such)\b|ERR!")
_FAILING_LINES = 12
_LAST_LINES = 8


def build_job_path(op: Operator, ns: str, name: str, sha256: str) -> str:
    k = op.settings.kubernetes
    return object_path(
        "batch/v1", "Job", k.builds_namespace, labels.build_job_name(ns, name, sha256)
    )


async def _job_pods(op: Operator, job: dict[str, Any]) -> list[dict[str, Any]]:
    meta = job["metadata"]
    return await op.api.list(
        collection_path("v1", "Pod", meta["namespace"]), f"job-name={meta['name']}"
    )


def _termination_message(pod: dict[str, Any], container: str) -> str | None:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") != container:
            continue
        terminated = (status.get("state") or {}).get("terminated") or {}
        message = terminated.get("message")
        if message:
            return str(message)
    return None


async def read_digest(op: Operator, job: dict[str, Any]) -> str | None:
    for pod in await _job_pods(op, job):
        message = _termination_message(pod, "kaniko")
        match = _DIGEST.search(message or "")
        if match:
            return match.group(0)
    annotation = (job["metadata"].get("annotations") or {}).get(labels.DIGEST_ANNOTATION, "")
    match = _DIGEST.fullmatch(annotation.strip())
    return match.group(0) if match else None


async def build_log_tail(op: Operator, job: dict[str, Any]) -> str:
    """The failed build's last lines: its log, else its termination message, else why not."""
    lines = op.settings.kubernetes.build_log_tail_lines
    pods = await _job_pods(op, job)
    if not pods:
        return "build log unavailable: the build pod no longer exists"
    pod = pods[-1]
    why = "the log is empty"
    try:
        text = await op.api.read_log(
            pod["metadata"]["namespace"], pod["metadata"]["name"], "kaniko", lines
        )
        if text.strip():
            return "\n".join(text.strip().splitlines()[-lines:])
    except SlessError as e:
        why = str(answer_of(e) or e)
    message = _termination_message(pod, "kaniko")
    if message:
        return "\n".join(message.strip().splitlines()[-lines:])
    return f"build log unavailable: {why}"


def waiting_reason(pods: list[dict[str, Any]]) -> str | None:
    """Why a build pod has not started, in words: the scheduler's reason (``waiting for a
    node: 0/1 nodes are available: 1 Insufficient cpu.``) or its container's (an image
    that cannot be pulled, a Secret that is missing); None while it runs or starts."""
    for pod in reversed(pods):
        status = pod.get("status") or {}
        for cond in status.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                return plain(f"waiting for a node: {cond.get('message') or cond.get('reason')}")
        for container in status.get("containerStatuses") or []:
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
                detail = waiting.get("message") or ""
                return plain(f"waiting: {waiting['reason']}{': ' + detail if detail else ''}")
    return None


def _deadline_exceeded(job: dict[str, Any]) -> bool:
    return any(
        cond.get("type") in ("Failed", "FailureTarget")
        and cond.get("status") == "True"
        and cond.get("reason") == "DeadlineExceeded"
        for cond in (job.get("status") or {}).get("conditions") or []
    )


async def _last_wait(op: Operator, ns: str, name: str) -> str | None:
    """What the build waited for when the operator last wrote the status (the Job's pods
    are gone once its deadline passed; the handler's own copy may predate that write)."""
    function = await op.api.get(op.cr_path(KIND, ns, name)) or {}
    for cond in (function.get("status") or {}).get("conditions") or []:
        message = str(cond.get("message", ""))
        if cond.get("type") != "Built":
            continue
        if message.startswith("waiting"):
            return message
        if ": waiting" in message:  # already failed at its deadline (a handler's rerun)
            return message[message.index(": waiting") + 2 :]
    return None


async def _failed_build(op: Operator, job: dict[str, Any], sha: str, ns: str, name: str) -> str:
    """The message of a failed build: a missed deadline says so (and what it waited for),
    anything else shows the log's failing lines."""
    if _deadline_exceeded(job):
        timeout = (job.get("spec") or {}).get("activeDeadlineSeconds", "?")  # when it started
        waited = waiting_reason(await _job_pods(op, job)) or await _last_wait(op, ns, name)
        return (
            f"build of {sha[:12]} failed: it did not finish within {timeout} s"
            f" (SLESS_KUBERNETES_BUILD_TIMEOUT_S){': ' + waited if waited else ''}"
        )
    return failure_message(sha, await build_log_tail(op, job))


def failure_message(sha: str, log: str) -> str:
    """``build of <sha12> failed:`` then the log's lines that say what failed, then its
    last lines: plain text (no colour codes), the prefix first so that cutting a long
    message short (which keeps the head) never loses it."""
    lines = [line.rstrip() for line in plain(log).splitlines() if line.strip()]
    failing = [line for line in lines if _FAILING.search(line)][-_FAILING_LINES:]
    last = [line for line in lines[-_LAST_LINES:] if line not in failing]
    body = failing + (["--- last lines:", *last] if last and failing else last)
    return "\n".join([f"build of {sha[:12]} failed:", *body])


def job_state(job: dict[str, Any]) -> str:
    """running | succeeded | failed, from the Job's status (conditions, then counters)."""
    status = job.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("status") != "True":
            continue
        if cond.get("type") in ("Complete", "SuccessCriteriaMet"):
            return "succeeded"
        if cond.get("type") in ("Failed", "FailureTarget"):
            return "failed"
    if status.get("succeeded"):
        return "succeeded"
    if status.get("failed"):
        return "failed"
    return "running"


async def build_image(
    op: Operator,
    body: dict[str, Any],
    spec: FunctionSpec,
    sha: str,
    status: dict[str, Any],
    builds: dict[str, str],
) -> str:
    """The pinned image of ``sha``; starts its build at most once. Raises TemporaryError
    while it runs and PermanentError when it failed."""
    k = op.settings.kubernetes
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    assert spec.code is not None  # checked by the caller; not a security check
    job = await op.api.get(build_job_path(op, ns, name, sha))
    if job is None:
        await _start_build(op, ns, name, spec, sha, status, builds)
        job = await op.api.get(build_job_path(op, ns, name, sha))
    state = job_state(job) if job else "running"
    if job is not None and state == "succeeded":
        digest = await read_digest(op, job)
        if digest is None:
            raise kopf.TemporaryError(
                "build succeeded but its digest is not readable yet", delay=k.retry_delay_s
            )
        return f"{image_repository(k, ns, name)}@{digest}"
    if job is not None and state == "failed":
        message = await _failed_build(op, job, sha, ns, name)
        conditions = condition(
            status.get("conditions") or [], "Built", False, "BuildFailed", message[:2000]
        )
        status["conditions"] = conditions
        await fail(op, ns, name, status, "BuildFailed", message, observed_sha256=sha)
        raise kopf.PermanentError(f"build of {sha[:12]} failed")
    pods = await _job_pods(op, job) if job is not None else []
    # no pod (the Job controller removed it at the deadline): keep what it waited for
    waiting = waiting_reason(pods) if pods else await _last_wait(op, ns, name)
    reason = "Unschedulable" if waiting and waiting.startswith("waiting for a node") else "Building"
    conditions = condition(
        status.get("conditions") or [], "Built", False, reason, waiting[:2000] if waiting else sha
    )
    conditions = condition(conditions, "Ready", False, "Building")
    await op.patch_status(
        KIND,
        ns,
        name,
        status,
        {
            "phase": Phase.BUILDING.value,
            "message": f"building {sha[:12]}: {waiting[:2000]}"
            if waiting
            else f"building {sha[:12]}",
            "observed_sha256": sha,
            "conditions": conditions,
        },
    )
    raise kopf.TemporaryError(f"build of {sha[:12]} is running", delay=k.retry_delay_s)


async def _start_build(
    op: Operator,
    ns: str,
    name: str,
    spec: FunctionSpec,
    sha: str,
    status: dict[str, Any],
    builds: dict[str, str],
) -> None:
    k = op.settings.kubernetes
    assert spec.code is not None
    runtime = Runtime(spec.runtime)
    base_image = k.runtime_images.get(runtime.value)
    if not base_image or op.contexts is None:
        message = f"no base image or S3 bucket configured for {runtime.value}"
        await fail(op, ns, name, status, "NotConfigured", message, builds=builds)
        raise kopf.PermanentError(message)
    try:
        await op.contexts.ensure(sha, spec.code.blob_key, runtime, base_image)
    except ContextError as e:
        await fail(op, ns, name, status, "BadCode", str(e), observed_sha256=sha)
        raise kopf.PermanentError(str(e)) from e
    except Exception as e:  # S3 down, credentials, throttling: all pass
        raise kopf.TemporaryError(
            f"preparing the build context failed: {type(e).__name__}", delay=k.retry_delay_s
        ) from e
    job = build_job(ns, name, sha, runtime, k, op.settings.s3)
    violations = check_build_job(job, k)
    if violations:
        message = "rendered build job violates policy: " + "; ".join(map(str, violations[:5]))
        await fail(op, ns, name, status, "PolicyViolation", message)
        raise kopf.PermanentError(message)
    await op.api.create(job)  # None = it already exists: never a second build

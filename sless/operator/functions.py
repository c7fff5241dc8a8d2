"""Function: code sha256 → kaniko build Job → Deployment pinned to the digest + Service.

Level-based: ``reconcile`` reads the Function, its build Job and its triggers and makes the
cluster match, so running it twice, concurrently (under the per-object lock) or after an
operator restart gives the same result.

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
- Held uploads: while the gateway keeps ``status.phase`` at Validating (review) or Rejected,
  nothing new is built; what already serves keeps serving.
- Phases: Building → Ready | Failed; conditions ``Built`` and ``Deployed``.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

import kopf
from pydantic import ValidationError

from sless.errors import Conflict, SlessError
from sless.kube import answer_of, collection_path, object_path
from sless.models import FunctionResourceSpec, FunctionSpec, Phase, Runtime
from sless.operator.contexts import ContextError
from sless.operator.state import Operator, condition, with_owner
from sless.policies import (
    EgressRefused,
    build_job,
    check_build_job,
    check_pod_spec,
    function_deployment,
    function_egress_policy,
    function_service,
    image_repository,
    is_idle,
    labels,
    replicas_for,
    sandbox_runtime_class,
)

log = logging.getLogger("sless.operator")

KIND = "Function"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
#: how many built sha256s a status remembers (older ones may be rebuilt if re-uploaded)
MAX_BUILDS = 20


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


async def _fail(
    op: Operator,
    ns: str,
    name: str,
    status: dict[str, Any],
    reason: str,
    message: str,
    **extra: Any,
) -> None:
    conditions = condition(status.get("conditions") or [], "Ready", False, reason, message)
    await op.patch_status(
        KIND,
        ns,
        name,
        status,
        {
            "phase": Phase.FAILED.value,
            "message": _short(message),
            "conditions": conditions,
            **extra,
        },
    )


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
    try:
        text = await op.api.read_log(
            pod["metadata"]["namespace"], pod["metadata"]["name"], "kaniko", lines
        )
        if text.strip():
            return "\n".join(text.strip().splitlines()[-lines:])
    except SlessError as e:
        message = _termination_message(pod, "kaniko")
        if message:
            return "\n".join(message.strip().splitlines()[-lines:])
        return f"build log unavailable: {answer_of(e) or e}"
    return "build log unavailable: the log is empty"


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


async def trigger_state(op: Operator, ns: str, name: str) -> tuple[bool, bool]:
    """(enabled, consumed) from the function's triggers.

    ``enabled`` is False when the function's pods have nothing to serve: it has http
    triggers, all of them disabled, and no enabled cron or rabbitmq trigger calls it
    (Deployment at 0). A function without http triggers is reachable as always; the
    gateway refuses ``/fn/...`` calls to one whose http triggers are all disabled.

    ``consumed``: an enabled rabbitmq trigger calls it. ``sless events`` calls pods
    directly and may not wake a function (its RBAC writes nothing), so such a function is
    never scaled to zero for being idle.
    """
    k = op.settings.kubernetes
    path = collection_path(f"{k.group}/{k.version}", "Trigger", ns)
    http_seen = http_open = other_open = consumed = False
    for trigger in await op.api.list(path):
        spec = trigger.get("spec") or {}
        if spec.get("function") != name or trigger["metadata"].get("deletionTimestamp"):
            continue
        enabled = spec.get("enabled") is not False
        if spec.get("type") == "http":
            http_seen = True
            http_open = http_open or enabled
        else:
            other_open = other_open or enabled
            consumed = consumed or (enabled and spec.get("type") == "rabbitmq")
    return not http_seen or http_open or other_open, consumed


def idle(op: Operator, body: dict[str, Any], *, consumed: bool) -> bool:
    """Scaled to zero: no call within the idle timeout (and no rabbitmq consumer)."""
    timeout = op.settings.kubernetes.idle_timeout_s
    return not consumed and is_idle(body, datetime.now(UTC), timeout)


async def sync_replicas(op: Operator, ns: str, name: str) -> None:
    """Scale an existing Deployment to what the function's spec, triggers and last call
    say (the idle timer, a trigger change and the gateway's wake-up all come here)."""
    body = await op.api.get(op.cr_path(KIND, ns, name))
    if body is None or body["metadata"].get("deletionTimestamp"):
        return
    try:
        spec = FunctionResourceSpec.model_validate(body.get("spec") or {})
    except ValidationError:
        return
    enabled, consumed = await trigger_state(op, ns, name)
    path = object_path("apps/v1", "Deployment", ns, labels.function_object_name(name))
    deployment = await op.api.get(path)
    if deployment is not None:
        current = (deployment.get("spec") or {}).get("replicas")
        replicas = replicas_for(
            spec,
            enabled=enabled,
            idle=idle(op, body, consumed=consumed),
            # what the gateway's autoscaler set stays, within the spec's bounds
            current=current if isinstance(current, int) else None,
            max_instances=op.settings.limits.max_instances,
        )
        if current != replicas:
            # only over the Deployment as read (see _deploy): a Conflict means the
            # autoscaler wrote meanwhile, and the next sync starts from its figure
            read_at = deployment["metadata"].get("resourceVersion")
            patch = {"metadata": {"resourceVersion": read_at}, "spec": {"replicas": replicas}}
            try:
                await op.api.merge_patch(path, patch)
                log.info("function %s/%s: %d replicas", ns, name, replicas)
            except Conflict:
                log.info("function %s/%s: replicas changed meanwhile; not scaled", ns, name)
    # the Deployments of the traffic split's other versions follow the same triggers
    for version, revision in spec.revisions.items():
        if version not in spec.routed_versions()[1:]:
            continue
        own = max(1, revision.min_instances) if enabled else 0
        path = object_path("apps/v1", "Deployment", ns, labels.version_object_name(name, version))
        if await op.api.get(path) is not None:
            await op.api.merge_patch(path, {"spec": {"replicas": own}})


async def current_replicas(op: Operator, deployment_path: str) -> tuple[int | None, str | None]:
    """The Deployment's replicas now (the autoscaler's last decision) and the resource
    version they were read at; (None, None) if it is new."""
    deployment = await op.api.get(deployment_path)
    if deployment is None:
        return None, None
    replicas = (deployment.get("spec") or {}).get("replicas")
    read_at = deployment["metadata"].get("resourceVersion")
    return (replicas if isinstance(replicas, int) else None), read_at


async def reconcile(op: Operator, body: dict[str, Any]) -> None:
    meta = body["metadata"]
    ns, name = meta["namespace"], meta["name"]
    if meta.get("deletionTimestamp"):
        return
    async with op.locked(KIND, ns, name):
        fresh = await op.api.get(op.cr_path(KIND, ns, name))
        if fresh is None or fresh["metadata"].get("deletionTimestamp"):
            return
        await _reconcile(op, fresh)


async def _reconcile(op: Operator, body: dict[str, Any]) -> None:
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    status: dict[str, Any] = dict(body.get("status") or {})
    try:
        resource = FunctionResourceSpec.model_validate(body.get("spec") or {})
        spec = resource.function_spec()
        labels.function_object_name(name)
    except (ValidationError, ValueError) as e:
        message = f"invalid function: {str(e)[:500]}"
        await _fail(op, ns, name, status, "InvalidSpec", message)
        raise kopf.PermanentError(message) from e
    if spec.code is None:
        return  # nothing uploaded yet: the gateway shows Pending
    sha = spec.code.sha256
    builds: dict[str, str] = dict(status.get("builds") or {})
    held = status.get("phase") in (Phase.VALIDATING.value, Phase.REJECTED.value)
    if held and status.get("observed_sha256") != sha and sha not in builds:
        return  # under review or rejected: the gateway releases it by setting Pending

    image = builds.get(sha)
    if image is None:
        image = await _build(op, body, spec, sha, status, builds)
        builds[sha] = image
        builds = dict(list(builds.items())[-MAX_BUILDS:])
    conditions = condition(status.get("conditions") or [], "Built", True, "Built", image)

    deployed = await _deploy(op, body, spec, image, sha, status, builds)
    revisions = await _deploy_revisions(op, body, spec, resource.revisions, status, builds)
    builds = dict(list(builds.items())[-MAX_BUILDS:])
    conditions = condition(conditions, "Deployed", True, "Applied", deployed)
    conditions = condition(conditions, "Ready", True, "Deployed")
    ready: dict[str, Any] = {
        "phase": Phase.READY.value,
        "message": "",
        "observed_sha256": sha,
        "image": image,
        "servingSpec": spec.model_dump(mode="json"),
        # a merge patch: a version no longer served is removed by a null
        "servingRevisions": {
            **{v: None for v in status.get("servingRevisions") or {} if v not in revisions},
            **{v: r.model_dump(mode="json") for v, r in revisions.items()},
        },
        "builds": builds,
        "conditions": conditions,
    }
    if held:
        # the gateway's Validating/Rejected stays visible; what serves is unchanged
        del ready["phase"], ready["message"]
    await op.patch_status(KIND, ns, name, status, ready)


async def _deploy_revisions(
    op: Operator,
    body: dict[str, Any],
    spec: FunctionSpec,
    revisions: dict[str, FunctionSpec],
    status: dict[str, Any],
    builds: dict[str, str],
) -> dict[str, FunctionSpec]:
    """Give each other version the traffic split names its own Deployment, Service and
    egress policy (built once per sha256, like the current one); remove those of versions
    no longer named. Returns the revisions applied (``status.servingRevisions``)."""
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    wanted = {v: r for v, r in revisions.items() if v in spec.routed_versions()[1:]}
    applied: dict[str, FunctionSpec] = {}
    for version, revision in sorted(wanted.items()):
        if revision.code is None or revision.code.version != version:
            continue  # not written by the gateway so; nothing to run
        sha = revision.code.sha256
        image = builds.get(sha)
        if image is None:
            image = await _build(op, body, revision, sha, status, builds)
            builds[sha] = image
        await _deploy(op, body, revision, image, sha, status, builds, version=version)
        applied[version] = revision
    selector = (
        f"{labels.MANAGED_BY}={labels.MANAGER},{labels.FUNCTION}={name},"
        f"{labels.TRACK},{labels.TRACK}!={labels.CURRENT_TRACK}"
    )
    for deployment in await op.api.list(collection_path("apps/v1", "Deployment", ns), selector):
        track = (deployment["metadata"].get("labels") or {}).get(labels.TRACK)
        if track in applied:
            continue
        object_name = deployment["metadata"]["name"]
        await op.api.delete(object_path("apps/v1", "Deployment", ns, object_name))
        await op.api.delete(object_path("v1", "Service", ns, object_name))
        await op.api.delete(
            object_path("networking.k8s.io/v1", "NetworkPolicy", ns, f"{object_name}-egress")
        )
    return applied


async def _deploy(
    op: Operator,
    body: dict[str, Any],
    spec: FunctionSpec,
    image: str,
    sha: str,
    status: dict[str, Any],
    builds: dict[str, str],
    *,
    version: str | None = None,
) -> str:
    """Render the Deployment, Service and egress policy (of the current version, or of
    ``version``), check the pod against the allowlist, apply them; returns the
    Deployment's name."""
    k = op.settings.kubernetes
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    try:
        runtime_class = sandbox_runtime_class(k)
        enabled, consumed = await trigger_state(op, ns, name)
        deployment_path = object_path(
            "apps/v1", "Deployment", ns, labels.function_object_name(name)
        )
        current, read_at = await current_replicas(op, deployment_path)
        deployment = function_deployment(
            spec,
            ns,
            name,
            image,
            sha,
            k,
            enabled=enabled,
            # what the gateway's autoscaler set stays, within the spec's bounds; 0 when idle
            replicas=replicas_for(
                spec,
                enabled=enabled,
                idle=idle(op, body, consumed=consumed),
                current=current,
                max_instances=op.settings.limits.max_instances,
            ),
            # written by the gateway's backend with the function's Secret: a new value
            # rolls the pods
            secrets_version=(body["metadata"].get("annotations") or {}).get(
                labels.SECRETS_VERSION_ANNOTATION
            ),
            version=version,
        )
        egress = function_egress_policy(
            ns, name, spec.egress, await op.api_server_addresses(), version=version
        )
    except (EgressRefused, ValueError) as e:
        await _fail(op, ns, name, status, "PolicyRefused", str(e), builds=builds)
        raise kopf.PermanentError(str(e)) from e
    violations = check_pod_spec(
        deployment["spec"]["template"]["spec"],
        runtime_class=runtime_class,
        require_digest=True,
        allowed_secret=labels.function_secret_name(name) if spec.secrets else None,
    )
    if violations:
        message = "rendered pod violates policy: " + "; ".join(map(str, violations[:5]))
        await _fail(op, ns, name, status, "PolicyViolation", message, builds=builds)
        raise kopf.PermanentError(message)
    if version is None and read_at is not None:
        # applied only over the Deployment as read: had the gateway's autoscaler set its
        # replicas since, the apply would put the old figure back (a lost update)
        deployment["metadata"]["resourceVersion"] = read_at
    try:
        await op.api.apply(with_owner(deployment, body))
        await op.api.apply(with_owner(function_service(ns, name, version), body))
        object_name = (
            labels.function_object_name(name)
            if version is None
            else labels.version_object_name(name, version)
        )
        egress_path = object_path(
            "networking.k8s.io/v1", "NetworkPolicy", ns, f"{object_name}-egress"
        )
        if egress is not None:
            egress["metadata"]["labels"] = {
                **labels.function_labels(name),
                labels.TRACK: version or labels.CURRENT_TRACK,
            }
            await op.api.apply(with_owner(egress, body))
        else:
            await op.api.delete(egress_path)
    except SlessError as e:
        answer = answer_of(e)
        if answer is not None and answer.status == 409:
            raise kopf.TemporaryError(
                "the Deployment changed since it was read (its replicas, by the autoscaler?):"
                " rendering it again",
                delay=1,
            ) from e
        if answer is not None and answer.status in (400, 403, 422):
            message = f"the cluster refused the function's objects: {answer or e}"
            await _fail(op, ns, name, status, "ApplyRefused", message, builds=builds)
            raise kopf.PermanentError(message) from e
        raise kopf.TemporaryError(f"applying failed: {answer or e}", delay=k.retry_delay_s) from e
    return str(deployment["metadata"]["name"])


async def _build(
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
        tail = await build_log_tail(op, job)
        message = f"build of {sha[:12]} failed:\n{tail}"
        conditions = condition(status.get("conditions") or [], "Built", False, "BuildFailed", tail)
        status["conditions"] = conditions
        await _fail(op, ns, name, status, "BuildFailed", message, observed_sha256=sha)
        raise kopf.PermanentError(f"build of {sha[:12]} failed")
    conditions = condition(status.get("conditions") or [], "Built", False, "Building", sha)
    conditions = condition(conditions, "Ready", False, "Building")
    await op.patch_status(
        KIND,
        ns,
        name,
        status,
        {
            "phase": Phase.BUILDING.value,
            "message": f"building {sha[:12]}",
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
        await _fail(op, ns, name, status, "NotConfigured", message, builds=builds)
        raise kopf.PermanentError(message)
    try:
        await op.contexts.ensure(sha, spec.code.blob_key, runtime, base_image)
    except ContextError as e:
        await _fail(op, ns, name, status, "BadCode", str(e), observed_sha256=sha)
        raise kopf.PermanentError(str(e)) from e
    except Exception as e:  # S3 down, credentials, throttling: all pass
        raise kopf.TemporaryError(
            f"preparing the build context failed: {type(e).__name__}", delay=k.retry_delay_s
        ) from e
    job = build_job(ns, name, sha, runtime, k, op.settings.s3)
    violations = check_build_job(job, k)
    if violations:
        message = "rendered build job violates policy: " + "; ".join(map(str, violations[:5]))
        await _fail(op, ns, name, status, "PolicyViolation", message)
        raise kopf.PermanentError(message)
    await op.api.create(job)  # None = it already exists: never a second build


async def cleanup(op: Operator, body: dict[str, Any]) -> None:
    """On delete: Deployment, Service, egress policy, build Jobs (and their pods), and the
    code blobs no other Function uses."""
    k = op.settings.kubernetes
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    async with op.locked(KIND, ns, name):
        object_name = labels.function_object_name(name)
        names = [object_name]
        selector = f"{labels.MANAGED_BY}={labels.MANAGER},{labels.FUNCTION}={name},{labels.TRACK}"
        for deployment in await op.api.list(collection_path("apps/v1", "Deployment", ns), selector):
            if deployment["metadata"]["name"] not in names:
                names.append(deployment["metadata"]["name"])
        for object_name in names:
            await op.api.delete(object_path("apps/v1", "Deployment", ns, object_name))
            await op.api.delete(object_path("v1", "Service", ns, object_name))
            await op.api.delete(
                object_path("networking.k8s.io/v1", "NetworkPolicy", ns, f"{object_name}-egress")
            )
        selector = (
            f"{labels.MANAGED_BY}={labels.MANAGER},{labels.COMPONENT}=build,"
            f"{labels.FUNCTION}={name},{labels.NAMESPACE}={ns}"
        )
        await op.api.delete_collection(
            collection_path("batch/v1", "Job", k.builds_namespace), selector
        )
        await _delete_unused_code(op, body)
    op.forget(KIND, ns, name)


async def _delete_unused_code(op: Operator, body: dict[str, Any]) -> None:
    if op.contexts is None:
        return
    spec = body.get("spec") or {}
    status = body.get("status") or {}
    code = spec.get("code") or {}
    mine: dict[str, str] = {}
    for sha in status.get("builds") or {}:
        mine[sha] = f"{op.settings.s3.prefix}{sha}.zip"
    if code.get("sha256"):
        mine[code["sha256"]] = (
            code.get("blob_key") or f"{op.settings.s3.prefix}{code['sha256']}.zip"
        )
    if not mine:
        return
    k = op.settings.kubernetes
    others = await op.api.list(f"/apis/{k.group}/{k.version}/functions")
    used: set[str] = set()
    for other in others:
        if other["metadata"]["uid"] == body["metadata"]["uid"]:
            continue
        other_code = (other.get("spec") or {}).get("code") or {}
        if other_code.get("sha256"):
            used.add(other_code["sha256"])
        used.update((other.get("status") or {}).get("builds") or {})
    for sha, key in mine.items():
        if sha in used:
            continue
        try:
            await op.contexts.delete_code(sha, key)
        except Exception as e:
            raise kopf.TemporaryError(
                f"deleting code blobs failed: {type(e).__name__}", delay=k.retry_delay_s
            ) from e

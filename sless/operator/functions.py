"""Function: code sha256 → kaniko build Job → Deployment pinned to the digest + Service.

Level-based: ``reconcile`` reads the Function, its build Job and its triggers and makes the
cluster match, so running it twice, concurrently (under the per-object lock) or after an
operator restart gives the same result. Building is ``building``'s (once per sha256); the
Deployments, Services and egress policies are ``deploying``'s.

- Which code may serve: the one rule (``sless.models.admission``) with the versions the
  gateway's code gate wrote into ``status.allowedVersions``. A current version not in it
  (held, rejected, unknown) is neither built nor deployed, whatever the phase says (a spec
  PUT does not release it); a traffic target not in it gets no Deployment. What already
  serves keeps serving. Only code from before versions (no ``code.version``, so no
  ``allowedVersions`` either) falls back to the phase: nothing is built while the gateway
  keeps it at Validating (review) or Rejected.
- Phases: Building → Ready | Failed; conditions ``Built`` and ``Deployed``.
"""

from __future__ import annotations

from typing import Any

import kopf
from pydantic import ValidationError

from sless.kube import collection_path, object_path
from sless.models import (
    FunctionResourceSpec,
    FunctionSpec,
    Phase,
    Refusal,
    VersionState,
    refusals,
    wanted_versions,
)
from sless.operator.building import build_image
from sless.operator.deploying import deploy, deploy_revisions
from sless.operator.function_status import KIND, fail
from sless.operator.state import Operator, condition
from sless.policies import labels

#: how many built sha256s a status remembers (older ones may be rebuilt if re-uploaded)
MAX_BUILDS = 20


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
        await fail(op, ns, name, status, "InvalidSpec", message)
        raise kopf.PermanentError(message) from e
    if spec.code is None:
        return  # nothing uploaded yet: the gateway shows Pending
    sha = spec.code.sha256
    builds: dict[str, str] = dict(status.get("builds") or {})
    refused = _refused(spec, status)
    if refused is not None:
        if refused and refused[0].version == spec.version:
            # never built nor deployed: what serves keeps serving; the phase that says why
            # (Validating, Rejected) is the gateway's, written with the list
            return
        refused_versions = {r.version for r in refused}
        resource.revisions = {
            v: r for v, r in resource.revisions.items() if v not in refused_versions
        }
    held = refused is None and status.get("phase") in (
        Phase.VALIDATING.value,
        Phase.REJECTED.value,
    )
    if held and status.get("observed_sha256") != sha and sha not in builds:
        return  # code from before versions, under review or rejected: phase rule

    image = builds.get(sha)
    if image is None:
        image = await build_image(op, body, spec, sha, status, builds)
        builds[sha] = image
        builds = dict(list(builds.items())[-MAX_BUILDS:])
    conditions = condition(status.get("conditions") or [], "Built", True, "Built", image)

    deployed = await deploy(op, body, spec, image, sha, status, builds)
    revisions = await deploy_revisions(op, body, spec, resource.revisions, status, builds)
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


def _refused(spec: FunctionSpec, status: dict[str, Any]) -> list[Refusal] | None:
    """The versions of ``spec`` the code gate refused (the gateway's ``allowedVersions``);
    None only for code from before versions, which has no such list (the phase rule)."""
    allowed = status.get("allowedVersions")
    if allowed is None and spec.version is None:
        return None
    states = {str(v): VersionState.ALLOWED for v in allowed or []}
    return refusals(wanted_versions(spec), states)


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

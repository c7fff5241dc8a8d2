"""A function's image → its Deployment (pinned to the digest), Service and egress policy,
for the current version and for each other version its traffic split names.

The rendered pod is checked against the allowlist before it is applied. Replicas follow the
spec, the triggers (none enabled: 0), the idle timer (scale to zero) and the gateway's
autoscaler, whose figure is only overwritten over the Deployment as it was read.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import kopf
from pydantic import ValidationError

from sless.errors import Conflict, SlessError
from sless.kube import answer_of, collection_path, object_path
from sless.models import FunctionResourceSpec, FunctionSpec
from sless.operator.building import build_image
from sless.operator.failing import cluster_failure
from sless.operator.function_status import KIND, fail
from sless.operator.state import Operator, with_owner
from sless.policies import (
    EgressRefused,
    check_pod_spec,
    function_deployment,
    function_egress_policy,
    function_service,
    is_idle,
    labels,
    replicas_for,
    sandbox_runtime_class,
)

log = logging.getLogger("sless.operator")


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
            # only over the Deployment as read (see deploy): a Conflict means the
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


async def deploy_revisions(
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
            image = await build_image(op, body, revision, sha, status, builds)
            builds[sha] = image
        await deploy(op, body, revision, image, sha, status, builds, version=version)
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


async def deploy(
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
    deployment, egress = await _render(op, body, spec, image, sha, status, builds, version)
    await _apply(op, body, deployment, egress, status, builds, version)
    return str(deployment["metadata"]["name"])


async def _render(
    op: Operator,
    body: dict[str, Any],
    spec: FunctionSpec,
    image: str,
    sha: str,
    status: dict[str, Any],
    builds: dict[str, str],
    version: str | None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The Deployment (its pod checked against the allowlist) and the egress policy; a
    refusal fails the function for good."""
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
            ns,
            name,
            spec.egress,
            # the API server's and the nodes' own addresses are excepted alike
            [*await op.api_server_addresses(), *await op.node_addresses()],
            version=version,
            private_allowed=op.settings.egress.private_allowed,
        )
    except (EgressRefused, ValueError) as e:
        await fail(op, ns, name, status, "PolicyRefused", str(e), builds=builds)
        raise kopf.PermanentError(str(e)) from e
    violations = check_pod_spec(
        deployment["spec"]["template"]["spec"],
        runtime_class=runtime_class,
        require_digest=True,
        allowed_secret=labels.function_secret_name(name) if spec.secrets else None,
    )
    if violations:
        message = "rendered pod violates policy: " + "; ".join(map(str, violations[:5]))
        await fail(op, ns, name, status, "PolicyViolation", message, builds=builds)
        raise kopf.PermanentError(message)
    if version is None and read_at is not None:
        # applied only over the Deployment as read: had the gateway's autoscaler set its
        # replicas since, the apply would put the old figure back (a lost update)
        deployment["metadata"]["resourceVersion"] = read_at
    return deployment, egress


async def _apply(
    op: Operator,
    body: dict[str, Any],
    deployment: dict[str, Any],
    egress: dict[str, Any] | None,
    status: dict[str, Any],
    builds: dict[str, str],
    version: str | None,
) -> None:
    """Apply what ``_render`` made (owned by the Function). A 409 (the autoscaler wrote the
    Deployment since it was read) renders again; a refusal by the cluster fails the function."""
    k = op.settings.kubernetes
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
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

        async def record(message: str) -> None:
            await fail(op, ns, name, status, "ApplyRefused", message, builds=builds)

        raise await cluster_failure(
            e,
            refused="the cluster refused the function's objects",
            failed="applying failed",
            delay=k.retry_delay_s,
            record=record,
        ) from e

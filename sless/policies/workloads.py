"""The Kubernetes objects that serve and invoke a function: Deployment, Service, the
CronJob of a cron trigger and the Job of a FunctionJob run. Pod templates come from
``pods``; this module adds names, labels, replicas and schedules."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sless.config import KubernetesSettings
from sless.models import FunctionSpec, TriggerSpec
from sless.policies import labels
from sless.policies.pods import function_pod_spec, invoker_pod_spec


def replicas_for(
    spec: FunctionSpec,
    *,
    enabled: bool,
    idle: bool = False,
    current: int | None = None,
    max_instances: int | None = None,
) -> int:
    """``min_instances`` pods, at least one while the function is called; 0 when it has
    been ``idle`` (``min_instances: 0`` and no call within the idle timeout: the gateway
    wakes it on the next call) or when its http triggers are all disabled.

    ``current`` is what the Deployment has now: the gateway's autoscaler sets it from the
    calls in flight, so a re-apply keeps it, brought within ``[max(1, min_instances),
    max_instances]`` (the spec's, capped by the tenant's quota ``max_instances``); a
    Deployment at 0 that is no longer idle wakes at the lower bound."""
    if not enabled or (idle and spec.min_instances == 0):
        return 0
    lower = max(1, spec.min_instances)
    if not current or current <= 0:
        return lower
    upper = spec.max_instances if max_instances is None else min(spec.max_instances, max_instances)
    return max(lower, min(upper, current))


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _ready_since(status: dict[str, Any]) -> datetime | bool | None:
    """When the Ready condition became True; False while it is not True."""
    for item in status.get("conditions") or []:
        if isinstance(item, dict) and item.get("type") == "Ready":
            if item.get("status") != "True":
                return False
            return _timestamp(item.get("lastTransitionTime"))
    return False


def last_activity(body: dict[str, Any]) -> datetime | None:
    """The latest of: the gateway's last call, the Function's creation, the moment its
    serving version became Ready (a new version starts awake). None when none reads."""
    metadata = body.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    ready = _ready_since(body.get("status") or {})
    times = [
        t
        for t in (
            _timestamp(annotations.get(labels.LAST_CALL_ANNOTATION)),
            _timestamp(metadata.get("creationTimestamp")),
            ready if isinstance(ready, datetime) else None,
        )
        if t is not None
    ]
    return max(times) if times else None


def is_idle(body: dict[str, Any], now: datetime, idle_timeout_s: float) -> bool:
    """A Function's ``body`` is idle when it is Ready and had no call within
    ``idle_timeout_s`` (0 turns scale to zero off). One not Ready (being built or rolled
    out now) is never idle: its pods start, and the timeout counts from then."""
    if idle_timeout_s <= 0 or _ready_since(body.get("status") or {}) is False:
        return False
    last = last_activity(body)
    return last is not None and (now - last).total_seconds() > idle_timeout_s


def function_deployment(
    spec: FunctionSpec,
    namespace: str,
    name: str,
    image: str,
    sha256: str,
    settings: KubernetesSettings,
    *,
    enabled: bool = True,
    idle: bool = False,
    secrets_version: str | None = None,
    replicas: int | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    """``secrets_version`` (the function's secrets' write stamps) goes on the pod template:
    a new value changes it and the Deployment rolls. ``replicas``: see ``replicas_for``
    (unset: a new Deployment's).

    Without ``version``: the Deployment ``fn-<name>`` of the current version (its selector
    is the one it always had: a Deployment's selector cannot change). With ``version``: the
    Deployment of one more version a traffic split names, selecting only its own track.
    Every pod carries its track, so each Service selects one track only."""
    track = version or labels.CURRENT_TRACK
    if version is None:
        object_name = labels.function_object_name(name)
        selector = labels.function_selector(name)
    else:
        object_name = labels.version_object_name(name, version)
        selector = labels.track_selector(name, track)
    pod_labels = {**labels.function_labels(name), labels.TRACK: track}
    template_annotations = {labels.SHA256_ANNOTATION: sha256}
    if secrets_version is not None:
        template_annotations[labels.SECRETS_VERSION_ANNOTATION] = secrets_version
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": object_name,
            "namespace": namespace,
            "labels": pod_labels,
            "annotations": {labels.SHA256_ANNOTATION: sha256},
        },
        "spec": {
            "replicas": (
                replicas_for(spec, enabled=enabled, idle=idle) if replicas is None else replicas
            ),
            "revisionHistoryLimit": 2,
            "selector": {"matchLabels": selector},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "template": {
                "metadata": {
                    "labels": pod_labels,
                    "annotations": template_annotations,
                },
                "spec": function_pod_spec(spec, namespace, name, image, settings),
            },
        },
    }


def function_service(namespace: str, name: str, version: str | None = None) -> dict[str, Any]:
    """ClusterIP Service ``fn-<name>`` (the current version's pods) or, with ``version``,
    that version's own Service: the gateway finds its EndpointSlices by the
    ``kubernetes.io/service-name`` label the EndpointSlice controller sets."""
    track = version or labels.CURRENT_TRACK
    object_name = (
        labels.function_object_name(name)
        if version is None
        else labels.version_object_name(name, version)
    )
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": object_name,
            "namespace": namespace,
            "labels": {**labels.function_labels(name), labels.TRACK: track},
        },
        "spec": {
            "type": "ClusterIP",
            "selector": labels.track_selector(name, track),
            "ports": [
                {
                    "name": "http",
                    "protocol": "TCP",
                    "port": labels.FUNCTION_PORT,
                    "targetPort": labels.FUNCTION_PORT,
                }
            ],
        },
    }


def invoke_url(settings: KubernetesSettings, base_url: str, namespace: str, name: str) -> str:
    del settings  # the URL is the gateway's, whatever the cluster
    return f"{base_url.rstrip('/')}/fn/{namespace}/{name}"


def _invoker_labels(function: str, extra: dict[str, str]) -> dict[str, str]:
    return {**labels.managed(), labels.COMPONENT: "invoker", labels.FUNCTION: function, **extra}


def cron_job(
    trigger_name: str,
    trigger: TriggerSpec,
    namespace: str,
    base_url: str,
    timeout_s: float,
    settings: KubernetesSettings,
) -> dict[str, Any]:
    """A cron trigger: a CronJob whose pods POST ``payload`` to the function through the
    gateway (auth, limits and invocation records apply as for any caller). Suspended, not
    deleted, while the trigger is disabled."""
    if not trigger.schedule:
        raise ValueError("a cron trigger needs a schedule")
    pod_labels = _invoker_labels(trigger.function, {labels.TRIGGER: trigger_name})
    url = invoke_url(settings, base_url, namespace, trigger.function)
    payload = json.dumps(trigger.payload if trigger.payload is not None else {})
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {
            "name": labels.cronjob_name(trigger_name),
            "namespace": namespace,
            "labels": pod_labels,
        },
        "spec": {
            "schedule": trigger.schedule,
            "timeZone": trigger.timezone,
            "suspend": not trigger.enabled,
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 300,
            "successfulJobsHistoryLimit": 1,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {
                "metadata": {"labels": pod_labels},
                "spec": {
                    "backoffLimit": 0,
                    "activeDeadlineSeconds": int(timeout_s + settings.activation_timeout_s) + 60,
                    "ttlSecondsAfterFinished": 3600,
                    "template": {
                        "metadata": {"labels": pod_labels},
                        "spec": invoker_pod_spec(url, payload, timeout_s, settings),
                    },
                },
            },
        },
    }


def function_job(
    job_name: str,
    function: str,
    run_id: int,
    payload: Any,
    namespace: str,
    base_url: str,
    timeout_s: float,
    settings: KubernetesSettings,
) -> dict[str, Any]:
    """One run of a FunctionJob: one Job, named after (job, run_id) so that the same run
    id can never create a second one; ``backoffLimit: 0``: a run is not retried behind the
    tenant's back (a retry is a new run id)."""
    pod_labels = _invoker_labels(function, {labels.FUNCTION_JOB: job_name})
    url = invoke_url(settings, base_url, namespace, function)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": labels.function_job_name(job_name, run_id),
            "namespace": namespace,
            "labels": pod_labels,
            "annotations": {labels.RUN_ID_ANNOTATION: str(run_id)},
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(timeout_s + settings.activation_timeout_s) + 60,
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": invoker_pod_spec(url, json.dumps(payload), timeout_s, settings),
            },
        },
    }

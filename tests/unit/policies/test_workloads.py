"""The function Deployment: a secrets version on the pod template rolls it; idle functions
scale to zero."""

from __future__ import annotations

from datetime import UTC, datetime

from sless.config import KubernetesSettings
from sless.models import FunctionSpec
from sless.policies import function_deployment, is_idle, labels, last_activity, replicas_for

IMAGE = "registry.test/sless/sless-acme-hello@sha256:" + "a" * 64


def test_a_new_secrets_version_changes_the_pod_template() -> None:
    spec = FunctionSpec.model_validate({"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]})

    def template(version: str | None) -> dict:
        deployment = function_deployment(
            spec,
            "sless-acme",
            "hello",
            IMAGE,
            "b" * 64,
            KubernetesSettings(),
            secrets_version=version,
        )
        return deployment["spec"]["template"]

    first, second = template("dbpass=2026-01-01T00:00:00"), template("dbpass=2026-01-02T00:00:00")
    assert first["metadata"]["annotations"][labels.SECRETS_VERSION_ANNOTATION] == (
        "dbpass=2026-01-01T00:00:00"
    )
    assert first != second
    assert labels.SECRETS_VERSION_ANNOTATION not in template(None)["metadata"]["annotations"]


NOW = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)


def _body(created: str, last_call: str | None = None, ready: str | None = "ready") -> dict:
    meta: dict = {"creationTimestamp": created}
    if last_call is not None:
        meta["annotations"] = {labels.LAST_CALL_ANNOTATION: last_call}
    status = "True" if ready else "False"
    since = created if ready in (None, "ready") else ready
    condition = {"type": "Ready", "status": status, "lastTransitionTime": since}
    return {"metadata": meta, "status": {"conditions": [condition]}}


def test_idle_means_ready_and_no_call_within_the_timeout() -> None:
    old = "2026-12-03T11:00:00Z"
    assert is_idle(_body(old), NOW, 300)
    assert not is_idle(_body(old, "2026-12-03T11:58:00Z"), NOW, 300)
    assert is_idle(_body(old, "2026-12-03T11:54:59Z"), NOW, 300)
    # created a moment ago, never called: not idle yet
    assert not is_idle(_body("2026-12-03T11:59:00Z"), NOW, 300)
    # a new version became Ready a moment ago: it starts awake
    assert not is_idle(_body(old, ready="2026-12-03T11:58:00Z"), NOW, 300)
    # not Ready (building, rolling out): never idle
    assert not is_idle(_body(old, ready=None), NOW, 300)
    # 0 turns scale to zero off; unreadable times never count as idle
    assert not is_idle(_body(old), NOW, 0)
    garbage = _body("soon", "yesterday")
    garbage["status"]["conditions"][0]["lastTransitionTime"] = "later"
    assert not is_idle(garbage, NOW, 300)
    assert last_activity(_body(old, "garbage")) == datetime(2026, 12, 3, 11, 0, tzinfo=UTC)


def test_replicas_scale_to_zero_only_without_min_instances() -> None:
    assert replicas_for(FunctionSpec(), enabled=True, idle=True) == 0
    assert replicas_for(FunctionSpec(), enabled=True, idle=False) == 1
    warm = FunctionSpec.model_validate({"min_instances": 2})
    assert replicas_for(warm, enabled=True, idle=True) == 2
    assert replicas_for(warm, enabled=False, idle=False) == 0
    deployment = function_deployment(
        FunctionSpec(), "sless-acme", "hello", IMAGE, "b" * 64, KubernetesSettings(), idle=True
    )
    assert deployment["spec"]["replicas"] == 0

"""The function Deployment: a secrets version on the pod template rolls it."""

from __future__ import annotations

from sless.config import KubernetesSettings
from sless.models import FunctionSpec
from sless.policies import function_deployment, labels

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

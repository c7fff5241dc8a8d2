"""Secrets in functions, Kubernetes mode, against the real kube-apiserver: the gateway's
backend copies the named secrets into the function's own Secret ``fn-<name>-secrets`` and
stamps the Function with a secrets version; a new value rewrites both (the operator then
re-renders the Deployment, whose pod template carries the version: tests/unit/policies).

The gateway runs with the test control plane's admin credentials here; that the shipped
RBAC lets it write those Secrets (through the per-tenant RoleBinding made at onboarding)
and nothing more is tests/kube/test_policies_rbac.py's.
"""

from __future__ import annotations

import base64

import pytest
from kubernetes import client

from tests.kube.test_backend_helpers import GROUP, VERSION, function_crd, kube_api, wait_for
from tests.kube.test_gateway_kubernetes import Onboarded, kube_gateway, kube_tenant, s3_bucket

# fixtures used here
__all__ = ["function_crd", "kube_api", "kube_gateway", "kube_tenant", "s3_bucket"]

pytestmark = pytest.mark.kube

ANNOTATION = "sless.kube5s.ru/secrets-version"


def test_a_functions_secrets_become_its_own_secret_and_a_new_value_restamps_it(
    kube_api: client.ApiClient, kube_tenant: Onboarded
) -> None:
    namespace, acme = kube_tenant.namespace, kube_tenant.client
    core = client.CoreV1Api(kube_api)
    custom = client.CustomObjectsApi(kube_api)
    base = f"/v1/namespaces/{namespace}"
    spec = {"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]}
    missing = acme.put(f"{base}/functions/hello", json=spec)
    assert missing.status_code == 422, missing.text
    assert acme.put(f"{base}/secrets/dbpass", json={"value": "first-value"}).status_code == 201
    created = acme.put(f"{base}/functions/hello", json=spec)
    assert created.status_code == 201, created.text

    secret = core.read_namespaced_secret("fn-hello-secrets", namespace)
    assert base64.b64decode(secret.data["dbpass"]) == b"first-value"
    assert secret.metadata.labels["sless.kube5s.ru/function"] == "hello"
    function = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "functions", "hello")
    first = function["metadata"]["annotations"][ANNOTATION]
    assert first.startswith("dbpass=")
    assert "first-value" not in str(function)
    assert "first-value" not in acme.get(f"{base}/functions/hello").text

    assert acme.put(f"{base}/secrets/dbpass", json={"value": "second"}).status_code == 200

    def restamped() -> bool:
        body = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "functions", "hello")
        return bool(body["metadata"]["annotations"][ANNOTATION] != first)

    wait_for("the Function to carry the new secrets version", restamped, timeout=30)
    secret = core.read_namespaced_secret("fn-hello-secrets", namespace)
    assert base64.b64decode(secret.data["dbpass"]) == b"second"

    # a spec without secrets removes the Secret and the stamp
    assert acme.put(f"{base}/functions/hello", json={}).status_code == 200
    function = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "functions", "hello")
    assert ANNOTATION not in (function["metadata"].get("annotations") or {})
    names = [s.metadata.name for s in core.list_namespaced_secret(namespace).items]
    assert "fn-hello-secrets" not in names

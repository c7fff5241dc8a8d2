"""deploy/crds/ installed into the real API server: structural, established, validating."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from sless.models import FunctionSpec

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

pytestmark = pytest.mark.kube

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "sless.kube5s.ru", "v1"


@pytest.fixture(scope="module")
def api(kube_testenv: KubeTestenv) -> Iterator[client.ApiClient]:
    with kube_testenv.api_client() as api_client:
        yield api_client


@pytest.fixture(scope="module")
def installed(api: client.ApiClient) -> list[dict[str, Any]]:
    from tests.kube.test_operator import install_crds

    install_crds(api)
    ext = client.ApiextensionsV1Api(api)
    return [
        api.sanitize_for_serialization(ext.read_custom_resource_definition(f"{plural}.{GROUP}"))
        for plural in ("functions", "triggers", "functionjobs", "tenants")
    ]


@pytest.fixture
def namespace(api: client.ApiClient) -> Iterator[str]:
    name = f"crds-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def test_crds_are_structural_and_established(installed: list[dict[str, Any]]) -> None:
    for crd in installed:
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions["Established"] == "True", crd["metadata"]["name"]
        assert conditions["NamesAccepted"] == "True"
        assert "NonStructuralSchema" not in conditions, crd["metadata"]["name"]
        assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}


def _function(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Function",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_function_objects_validate_against_the_schema(
    api: client.ApiClient, installed: list[dict[str, Any]], namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    # exactly what the gateway writes: FunctionSpec.model_dump(mode="json"), code null
    spec = FunctionSpec().model_dump(mode="json")
    created = custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "functions", _function("ok", spec)
    )
    assert created["spec"] == spec  # code and payload_format_version: null kept (nullable)
    # defaults are applied for what kubectl users leave out
    minimal = custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "functions", _function("minimal", {})
    )
    assert minimal["spec"]["runtime"] == "python3.11"
    assert minimal["spec"]["memory_mb"] == 128
    for bad in (
        {"runtime": "ruby3"},
        {"memory_mb": 1_000_000},
        {"timeout_s": 0},
        {"auth": "nobody"},
        {"code": {"sha256": "not-hex", "blob_key": "k"}},
        {"egress": ["10.0.0.0/8:1"] * 33},
        {"interface": "cgi"},
        {"payload_format_version": "3.0"},
    ):
        with pytest.raises(ApiException) as refused:
            custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, "functions", _function("bad", bad)
            )
        assert refused.value.status == 422, bad
    # unknown fields are pruned, not stored
    pruned = custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, "functions", _function("pruned", {"privileged": True})
    )
    assert "privileged" not in pruned["spec"]
    # status is a subresource with the operator's fields; validation keeps any JSON
    custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "functions",
        "ok",
        {"status": {"phase": "Ready", "validation": {"verdict": "allow", "x": [1]}}},
    )
    got = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "functions", "ok")
    assert got["status"] == {
        "phase": "Ready",
        "message": "",  # a schema default
        "validation": {"verdict": "allow", "x": [1]},
    }
    with pytest.raises(ApiException) as refused:
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, "functions", "ok", {"status": {"phase": "Exploded"}}
        )
    assert refused.value.status == 422


def test_trigger_job_and_tenant_objects(
    api: client.ApiClient, installed: list[dict[str, Any]], namespace: str
) -> None:
    custom = client.CustomObjectsApi(api)
    base = {"apiVersion": f"{GROUP}/{VERSION}"}
    trigger = custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "triggers",
        {
            **base,
            "kind": "Trigger",
            "metadata": {"name": "t"},
            "spec": {"type": "rabbitmq", "function": "f", "queue": "q"},
        },
    )
    assert trigger["spec"]["queue"] == "q"  # a trigger type's own fields are kept
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "triggers",
            {
                **base,
                "kind": "Trigger",
                "metadata": {"name": "u"},
                "spec": {"type": "smtp", "function": "f"},
            },
        )
    assert refused.value.status == 422
    job = custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "functionjobs",
        {
            **base,
            "kind": "FunctionJob",
            "metadata": {"name": "j"},
            "spec": {"function": "f", "run_id": 3, "payload": {"deep": {"x": [1, None]}}},
        },
    )
    assert job["spec"]["payload"] == {"deep": {"x": [1, None]}}
    with pytest.raises(ApiException) as refused:
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "functionjobs",
            {
                **base,
                "kind": "FunctionJob",
                "metadata": {"name": "k"},
                "spec": {"function": "f", "run_id": -1},
            },
        )
    assert refused.value.status == 422
    name = f"crdtest-{uuid.uuid4().hex[:6]}"
    tenant = custom.create_cluster_custom_object(
        GROUP,
        VERSION,
        "tenants",
        {**base, "kind": "Tenant", "metadata": {"name": name}, "spec": {}},
    )
    assert tenant["metadata"]["name"] == name
    assert "namespace" not in tenant["metadata"]
    custom.delete_cluster_custom_object(GROUP, VERSION, "tenants", name)
    assert json.dumps(installed)

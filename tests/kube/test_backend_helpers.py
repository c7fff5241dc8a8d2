"""Fixtures and helpers shared by the Kubernetes backend tests (no tests here).

The Function CRD comes from ``deploy/crds/`` when that directory holds it; until then a
minimal CRD (schema-free spec and status, status subresource) stands in. Whichever is
installed first in a session stays: the tests only rely on the contract both satisfy.

No kubelet runs, so these tests play the node's and the operator's parts: they patch a
Function's status and write EndpointSlices that point at servers started here. The API
server refuses loopback and link-local addresses in an EndpointSlice ("may not be in the
loopback range (127.0.0.0/8, ::1/128)"), so those servers listen inside a network
namespace made for them (``pod_host()``), on the far end of a veth pair.
"""

from __future__ import annotations

import atexit
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from pydantic import SecretStr

from sless.backends.kubernetes import KubernetesBackend
from sless.config import Settings
from tests.conftest import TEST_SECRETS_KEYS
from tests.netns import TestHost
from tests.support import wait_for

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

ROOT = Path(__file__).resolve().parents[2]
GROUP = "sless.kube5s.ru"
VERSION = "v1"
CRD_NAME = f"functions.{GROUP}"

MINIMAL_FUNCTION_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "functions", "singular": "function", "kind": "Function"},
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def project_crds() -> dict[str, dict[str, Any]]:
    """The CRDs in deploy/crds/ by name (none while that directory does not exist)."""
    crds = ROOT / "deploy" / "crds"
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(crds.glob("*.y*ml")) if crds.is_dir() else []:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                found[doc["metadata"]["name"]] = doc
    return found


#: the tests' "pods" live on a host of their own: a network namespace made here, reached
#: through a veth pair (``tests.netns``). The API server refuses loopback addresses in an
#: EndpointSlice, and no test may serve on an address of the machine's own namespace.
_HOST_SIDE = "10.252.0.1"
POD_ADDRESS = "10.252.0.2"
_host: TestHost | None = None


def pod_host() -> TestHost:
    """The namespace the tests' pods serve in (made once per test session)."""
    global _host
    if _host is None:
        _host = TestHost(_HOST_SIDE, POD_ADDRESS)
        atexit.register(_host.remove)
    return _host


def endpoint_slice(
    name: str,
    service: str,
    endpoints: list[tuple[str, bool]],
    port: int,
    *,
    port_name: str = "http",
) -> dict[str, Any]:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name, "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": [address], "conditions": {"ready": ready}} for address, ready in endpoints
        ],
        "ports": [{"name": port_name, "port": port, "protocol": "TCP"}],
    }


@pytest.fixture(scope="session")
def kube_api(kube_testenv: KubeTestenv) -> Iterator[client.ApiClient]:
    with kube_testenv.api_client() as api:
        yield api


@pytest.fixture(scope="session")
def function_crd(kube_api: client.ApiClient) -> str:
    """The Function CRD (and the project's other CRDs), installed once and Established."""
    ext = client.ApiextensionsV1Api(kube_api)
    crds = project_crds()
    crds.setdefault(CRD_NAME, MINIMAL_FUNCTION_CRD)
    for body in crds.values():
        try:
            ext.create_custom_resource_definition(body)
        except ApiException as e:
            if e.status != 409:
                raise

    def established() -> bool:
        for name in crds:
            crd = ext.read_custom_resource_definition(name)
            if not any(
                c.type == "Established" and c.status == "True" for c in crd.status.conditions or []
            ):
                return False
        return True

    wait_for("the CRDs to be established", established, timeout=60)
    custom = client.CustomObjectsApi(kube_api)

    def served() -> bool:
        # right after it is Established, a CRD's storage may still answer 429
        for body in crds.values():
            version = body["spec"]["versions"][0]["name"]
            try:
                custom.list_cluster_custom_object(
                    body["spec"]["group"], version, body["spec"]["names"]["plural"]
                )
            except ApiException as e:
                if e.status == 429:
                    return False
                raise
        return True

    wait_for("the custom resources to be served", served, timeout=60)
    return CRD_NAME


@pytest.fixture
def tenant_namespace(kube_api: client.ApiClient) -> Iterator[str]:
    """A fresh tenant namespace ``sless-<random>`` (the operator would create it)."""
    name = f"sless-t{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(kube_api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    custom = client.CustomObjectsApi(kube_api)
    # drop finalizers a test left behind, so that the namespace can go
    for item in custom.list_namespaced_custom_object(GROUP, VERSION, name, "functions")["items"]:
        if item["metadata"].get("finalizers"):
            custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                name,
                "functions",
                item["metadata"]["name"],
                {"metadata": {"finalizers": None}},
            )
    core.delete_namespace(name)


def kube_settings(settings: Settings, kube_testenv: KubeTestenv) -> Settings:
    settings.backend = "kubernetes"
    settings.kubernetes.kubeconfig = kube_testenv.kubeconfig
    # several processes on one database: they must share the secrets key
    settings.secrets.keys = SecretStr(TEST_SECRETS_KEYS)
    # no kubelet here: nothing would wake a function, so a call without a ready endpoint
    # is answered at once (scale from zero is tested on the node: tests/node)
    settings.kubernetes.idle_timeout_s = 0
    return settings


@pytest.fixture
async def backend(
    settings: Settings, kube_testenv: KubeTestenv, function_crd: str
) -> AsyncIterator[KubernetesBackend]:
    started = KubernetesBackend(kube_settings(settings, kube_testenv), endpoint_cooldown_s=2.0)
    await started.start()
    yield started
    await started.stop()

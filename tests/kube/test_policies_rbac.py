"""deploy/rbac/ applied to the real API server; SubjectAccessReview says what each service
account may do: the gateway manages sless resources and reads EndpointSlices only, the
operator gets what it needs and no Secrets, no RBAC, no cluster-admin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from kubernetes import client, utils
from kubernetes.client.exceptions import ApiException

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

pytestmark = pytest.mark.kube

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
GATEWAY = "system:serviceaccount:sless-system:sless-gateway"
OPERATOR = "system:serviceaccount:sless-system:sless-operator"


@pytest.fixture(scope="module")
def api(kube_testenv: KubeTestenv) -> Iterator[client.ApiClient]:
    with kube_testenv.api_client() as api_client:
        for path in ("namespaces.yaml", "rbac/gateway.yaml", "rbac/operator.yaml"):
            for doc in yaml.safe_load_all((DEPLOY / path).read_text()):
                try:
                    utils.create_from_dict(api_client, doc)
                except utils.FailToCreateError as e:
                    if any(
                        isinstance(x, ApiException) and x.status != 409 for x in e.api_exceptions
                    ):
                        raise
        yield api_client


def allowed(
    api: client.ApiClient,
    user: str,
    verb: str,
    resource: str,
    group: str = "",
    namespace: str | None = "sless-acme",
    subresource: str | None = None,
) -> bool:
    review = client.AuthorizationV1Api(api).create_subject_access_review(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", "system:serviceaccounts:sless-system"],
                "resourceAttributes": {
                    "verb": verb,
                    "resource": resource,
                    "group": group,
                    **({"namespace": namespace} if namespace else {}),
                    **({"subresource": subresource} if subresource else {}),
                },
            },
        }
    )
    return bool(review.status.allowed)


def test_gateway_manages_sless_resources_and_reads_endpointslices_only(
    api: client.ApiClient,
) -> None:
    for resource in ("functions", "triggers", "functionjobs"):
        for verb in ("get", "list", "watch", "create", "update", "patch", "delete"):
            assert allowed(api, GATEWAY, verb, resource, "sless.kube5s.ru"), (verb, resource)
    assert allowed(api, GATEWAY, "patch", "functions", "sless.kube5s.ru", subresource="status")
    assert allowed(api, GATEWAY, "create", "tenants", "sless.kube5s.ru", namespace=None)
    assert allowed(api, GATEWAY, "watch", "endpointslices", "discovery.k8s.io")
    refused = [
        ("get", "secrets", ""),
        ("list", "secrets", ""),
        ("create", "pods", ""),
        ("get", "pods", ""),
        ("create", "pods/exec", ""),
        ("create", "deployments", "apps"),
        ("create", "jobs", "batch"),
        ("create", "endpointslices", "discovery.k8s.io"),
        ("create", "namespaces", ""),
        ("create", "rolebindings", "rbac.authorization.k8s.io"),
        ("get", "configmaps", ""),
    ]
    for verb, resource, group in refused:
        assert not allowed(api, GATEWAY, verb, resource, group), (verb, resource)
    assert not allowed(api, GATEWAY, "get", "secrets", "", namespace="sless-builds")
    assert not allowed(api, GATEWAY, "escalate", "clusterroles", "rbac.authorization.k8s.io", None)


def test_operator_gets_what_it_needs_and_no_more(api: client.ApiClient) -> None:
    needed = [
        ("create", "deployments", "apps", "sless-acme"),
        ("patch", "services", "", "sless-acme"),
        ("create", "jobs", "batch", "sless-builds"),
        ("create", "cronjobs", "batch", "sless-acme"),
        ("patch", "networkpolicies", "networking.k8s.io", "sless-acme"),
        ("patch", "resourcequotas", "", "sless-acme"),
        ("patch", "limitranges", "", "sless-acme"),
        ("patch", "serviceaccounts", "", "sless-acme"),
        ("create", "namespaces", "", None),
        ("list", "pods", "", "sless-builds"),
        ("get", "pods/log", "", "sless-builds"),
        ("patch", "functions", "sless.kube5s.ru", "sless-acme"),
        ("create", "events", "", "sless-acme"),
    ]
    for verb, resource, group, ns in needed:
        resource, _, sub = resource.partition("/")
        assert allowed(api, OPERATOR, verb, resource, group, ns, sub or None), (verb, resource)
    refused = [
        ("get", "secrets", "", "sless-builds"),
        ("list", "secrets", "", None),
        ("create", "secrets", "", "sless-acme"),
        ("create", "pods", "", "sless-acme"),
        ("create", "pods/exec", "", "sless-acme"),
        ("delete", "namespaces", "", None),
        ("create", "rolebindings", "rbac.authorization.k8s.io", "sless-acme"),
        ("create", "clusterrolebindings", "rbac.authorization.k8s.io", None),
        ("create", "runtimeclasses", "node.k8s.io", None),
        ("create", "customresourcedefinitions", "apiextensions.k8s.io", None),
        ("create", "functions", "sless.kube5s.ru", "sless-acme"),
    ]
    for verb, resource, group, ns in refused:
        resource, _, sub = resource.partition("/")
        assert not allowed(api, OPERATOR, verb, resource, group, ns, sub or None), (verb, resource)

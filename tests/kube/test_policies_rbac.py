"""deploy/rbac/ applied to the real API server; SubjectAccessReview says what each service
account may do: the gateway manages sless resources and reads EndpointSlices cluster-wide,
and gets the functions' Secrets and the Deployments' scale only in a tenant namespace the
operator onboarded (a RoleBinding made then); the operator gets what it needs and no
Secrets, no cluster-admin, and can bind one narrow ClusterRole; a tenant's pods' service
account reads no Secret.

Onboarding runs as the operator's service account (a token of it, the operator's own
``KubeApi.apply`` of ``sless.policies.tenant_objects``), so the test also proves that the
shipped operator RBAC suffices to create what it renders."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from kubernetes import client, utils
from kubernetes.client.exceptions import ApiException

from sless.config import KubernetesSettings
from sless.kube import Forbidden, KubeApi
from sless.policies import tenant_objects

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
    assert not allowed(api, GATEWAY, "list", "secrets", "", namespace=None)
    assert not allowed(api, GATEWAY, "patch", "deployments", "apps")
    # its demand Leases, in its own namespace only
    assert allowed(api, GATEWAY, "patch", "leases", "coordination.k8s.io", "sless-system")
    assert not allowed(api, GATEWAY, "patch", "leases", "coordination.k8s.io")
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
        ("list", "nodes", "", None),  # their addresses: excepted from function egress
        ("watch", "nodes", "", None),  # a node that joins is excepted at once
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
        ("patch", "rolebindings", "rbac.authorization.k8s.io", "sless-acme"),
        ("create", "roles", "rbac.authorization.k8s.io", "sless-acme"),
        ("create", "clusterrolebindings", "rbac.authorization.k8s.io", None),
        ("create", "runtimeclasses", "node.k8s.io", None),
        ("create", "customresourcedefinitions", "apiextensions.k8s.io", None),
        ("create", "functions", "sless.kube5s.ru", "sless-acme"),
        ("patch", "nodes", "", None),
        ("get", "nodes/proxy", "", None),
    ]
    for verb, resource, group, ns in refused:
        resource, _, sub = resource.partition("/")
        assert not allowed(api, OPERATOR, verb, resource, group, ns, sub or None), (verb, resource)


# -- onboarding: the per-tenant RoleBinding ------------------------------------------------


def _token(api: client.ApiClient, account: str) -> str:
    token = client.CoreV1Api(api).create_namespaced_service_account_token(
        account,
        "sless-system",
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
        ),
    )
    return str(token.status.token)


def _kube_api(kube_testenv: KubeTestenv, token: str, tmp_path: Path, name: str) -> KubeApi:
    kubeconfig = tmp_path / f"kubeconfig-{name}"
    kubeconfig.write_text(kube_testenv.kubeconfig.read_text().replace(kube_testenv.token, token))
    return KubeApi(KubernetesSettings(kubeconfig=kubeconfig))


async def _apply_all(kube: KubeApi, objects: list[dict[str, Any]]) -> None:
    await kube.open()
    try:
        for obj in objects:
            await kube.apply(obj)
    finally:
        await kube.close()


def _secret(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "fn-f-secrets", "namespace": namespace},
        "type": "Opaque",
        "stringData": {"dbpass": "not-a-real-value"},
    }


async def _try_apply(kube: KubeApi, obj: dict[str, Any]) -> bool:
    await kube.open()
    try:
        await kube.apply(obj)
    except Forbidden:
        return False
    finally:
        await kube.close()
    return True


def test_onboarding_binds_tenant_secrets_to_the_gateway_in_that_namespace_only(
    api: client.ApiClient, kube_testenv: KubeTestenv, tmp_path: Path
) -> None:
    settings = KubernetesSettings()
    tenant = f"r{uuid.uuid4().hex[:8]}"
    namespace = f"sless-{tenant}"
    other = f"sless-o{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": other}})
    operator = _kube_api(kube_testenv, _token(api, "sless-operator"), tmp_path, "operator")
    gateway = _kube_api(kube_testenv, _token(api, "sless-gateway"), tmp_path, "gateway")
    try:
        # what the operator's Tenant handler applies, applied with the operator's token
        asyncio.run(_apply_all(operator, tenant_objects(tenant, None, settings, 8080)))
        binding = client.RbacAuthorizationV1Api(api).read_namespaced_role_binding(
            "sless-gateway", namespace
        )
        assert binding.role_ref.name == "sless-gateway-tenant"

        for verb in ("get", "create", "patch", "delete"):
            assert allowed(api, GATEWAY, verb, "secrets", "", namespace), verb
        assert allowed(api, GATEWAY, "patch", "deployments", "apps", namespace, "scale")
        assert allowed(api, GATEWAY, "get", "deployments", "apps", namespace, "scale")
        # never the Deployment itself (a pod template could run anything), never a list
        assert not allowed(api, GATEWAY, "patch", "deployments", "apps", namespace)
        assert not allowed(api, GATEWAY, "list", "secrets", "", namespace)
        assert not allowed(api, GATEWAY, "watch", "secrets", "", namespace)
        # a namespace nobody onboarded, the builds namespace, the gateway's own: nothing
        for elsewhere in (other, "sless-builds", "sless-system"):
            assert not allowed(api, GATEWAY, "get", "secrets", "", elsewhere), elsewhere
            assert not allowed(api, GATEWAY, "create", "secrets", "", elsewhere), elsewhere
        assert not allowed(api, GATEWAY, "patch", "deployments", "apps", other, "scale")

        # the same with the gateway's real token: the server-side apply the backend does
        assert asyncio.run(_try_apply(gateway, _secret(namespace)))
        assert not asyncio.run(_try_apply(gateway, _secret(other)))

        # the tenant's pods' service account reads no Secret, not even its function's
        pods = f"system:serviceaccount:{namespace}:sless-function"
        for verb in ("get", "list", "watch"):
            assert not allowed(api, pods, verb, "secrets", "", namespace), verb
        # and the operator still reads no Secret where it made the binding
        assert not allowed(api, OPERATOR, "get", "secrets", "", namespace)
        assert not allowed(api, OPERATOR, "list", "secrets", "", namespace)
    finally:
        client.CoreV1Api(api).delete_namespace(other)
        with contextlib.suppress(ApiException):
            client.CoreV1Api(api).delete_namespace(namespace)


def test_the_operator_cannot_bind_roles_it_does_not_hold(
    api: client.ApiClient, kube_testenv: KubeTestenv, tmp_path: Path
) -> None:
    """``bind`` is granted on sless-gateway-tenant only: cluster-admin, or any other role
    with Secrets, stays out of the operator's reach (RBAC's escalation check)."""
    namespace = f"sless-b{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
    reader = f"sless-test-secrets-reader-{uuid.uuid4().hex[:6]}"
    rbac = client.RbacAuthorizationV1Api(api)
    rbac.create_cluster_role(
        {
            "metadata": {"name": reader},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}],
        }
    )
    operator = _kube_api(kube_testenv, _token(api, "sless-operator"), tmp_path, "operator")
    try:
        for role in ("cluster-admin", reader):
            binding = {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "sless-gateway", "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": role,
                },
                "subjects": [
                    {"kind": "ServiceAccount", "name": "sless-function", "namespace": namespace}
                ],
            }
            assert not asyncio.run(_try_apply(operator, binding)), role
        assert not allowed(api, OPERATOR, "bind", "clusterroles", "rbac.authorization.k8s.io", None)
    finally:
        client.CoreV1Api(api).delete_namespace(namespace)
        rbac.delete_cluster_role(reader)

"""The test control plane itself: a real kube-apiserver with RBAC, Pod Security admission,
CRDs and (when built) the controller-manager's Deployment and garbage-collector controllers."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests import support

if TYPE_CHECKING:
    from conftest import KubeTestenv

pytestmark = pytest.mark.kube

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kube-testenv"


def pinned_kube_version() -> str:
    out = subprocess.run([str(SCRIPT), "versions"], capture_output=True, text=True, check=True)
    return dict(kv.split("=", 1) for kv in out.stdout.split())["kubernetes"]


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    return support.wait_for(what, check, timeout, interval=0.2)


@pytest.fixture
def api(kube_testenv: KubeTestenv) -> Iterator[client.ApiClient]:
    with kube_testenv.api_client() as api_client:
        yield api_client


@pytest.fixture
def namespace(api: client.ApiClient) -> Iterator[str]:
    """A fresh namespace that enforces Pod Security "restricted"."""
    name = f"testenv-{uuid.uuid4().hex[:8]}"
    core = client.CoreV1Api(api)
    core.create_namespace(
        client.V1Namespace(
            metadata=client.V1ObjectMeta(
                name=name,
                labels={
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "latest",
                },
            )
        )
    )
    # The ServiceAccount admission plugin refuses pods whose service account does not exist;
    # the controller-manager's serviceaccount controller creates "default", else we do.
    try:
        core.create_namespaced_service_account(
            name, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="default"))
        )
    except ApiException as exc:
        if exc.status != 409:
            raise
    yield name
    core.delete_namespace(name)


def test_api_answers_with_the_pinned_version(kube_testenv: KubeTestenv) -> None:
    ctx = ssl.create_default_context(cafile=str(kube_testenv.ca_file))

    def get(path: str, token: str | None = kube_testenv.token) -> tuple[int, bytes]:
        req = urllib.request.Request(kube_testenv.server + path)
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.read()

    assert get("/readyz") == (200, b"ok")
    status, body = get("/version")
    assert status == 200
    assert json.loads(body)["gitVersion"] == pinned_kube_version()
    # Authentication is required: no anonymous access, a wrong token is refused.
    assert get("/api/v1/namespaces", token=None)[0] == 401
    assert get("/api/v1/namespaces", token="not-a-token")[0] == 401
    status, body = get("/api/v1/namespaces")
    assert status == 200
    names = {item["metadata"]["name"] for item in json.loads(body)["items"]}
    assert {"default", "kube-system"} <= names
    # The kubeconfig written for the admin points at the same server.
    assert kube_testenv.server in kube_testenv.kubeconfig.read_text()


def test_start_is_idempotent(kube_testenv: KubeTestenv) -> None:
    proc = subprocess.run(
        [str(SCRIPT), "start", "--no-build", str(kube_testenv.dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "already running" in proc.stderr
    assert proc.stdout.strip() == str(kube_testenv.kubeconfig)


def _pod(name: str, security_context: client.V1SecurityContext) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            automount_service_account_token=False,
            containers=[
                client.V1Container(
                    name="fn",
                    image="registry.invalid/fn@sha256:" + "0" * 64,
                    security_context=security_context,
                )
            ],
        ),
    )


def test_pod_security_restricted_refuses_privileged_and_accepts_compliant(
    api: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api)
    privileged = _pod("privileged", client.V1SecurityContext(privileged=True))
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod(namespace, privileged, dry_run="All")
    assert refused.value.status == 403
    assert "violates PodSecurity" in refused.value.body
    assert "privileged" in refused.value.body

    compliant = _pod(
        "compliant",
        client.V1SecurityContext(
            run_as_non_root=True,
            run_as_user=10001,
            allow_privilege_escalation=False,
            read_only_root_filesystem=True,
            capabilities=client.V1Capabilities(drop=["ALL"]),
            seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault"),
        ),
    )
    accepted = core.create_namespaced_pod(namespace, compliant, dry_run="All")
    assert accepted.metadata.name == "compliant"
    # A dry run persists nothing.
    assert core.list_namespaced_pod(namespace).items == []


def test_crd_install_and_custom_object(api: client.ApiClient, namespace: str) -> None:
    group, plural = "testenv.sless.kube5s.ru", f"widgets{uuid.uuid4().hex[:6]}"
    crd_name = f"{plural}.{group}"
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": crd_name},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": plural[:-1], "kind": "Widget" + plural[7:]},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "properties": {"size": {"type": "integer", "minimum": 1}},
                                        "required": ["size"],
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
    )
    try:

        def established() -> bool:
            crd = ext.read_custom_resource_definition(crd_name)
            return any(
                c.type == "Established" and c.status == "True"
                for c in (crd.status.conditions or [])
            )

        wait_for("the CRD to be established", established, timeout=30)
        custom = client.CustomObjectsApi(api)
        kind = "Widget" + plural[7:]
        body = {"apiVersion": f"{group}/v1", "kind": kind, "metadata": {"name": "w1"}}
        created = custom.create_namespaced_custom_object(
            group, "v1", namespace, plural, {**body, "spec": {"size": 3}}
        )
        assert created["spec"] == {"size": 3}
        # The structural schema is enforced by the server.
        with pytest.raises(ApiException) as invalid:
            custom.create_namespaced_custom_object(
                group,
                "v1",
                namespace,
                plural,
                {**body, "metadata": {"name": "w2"}, "spec": {"size": 0}},
            )
        assert invalid.value.status == 422
        # Status is a subresource: a status patch does not touch the spec.
        custom.patch_namespaced_custom_object_status(
            group, "v1", namespace, plural, "w1", {"status": {"phase": "Ready"}}
        )
        got = custom.get_namespaced_custom_object(group, "v1", namespace, plural, "w1")
        assert got["status"] == {"phase": "Ready"}
        assert got["spec"] == {"size": 3}
    finally:
        ext.delete_custom_resource_definition(crd_name)


def test_deployment_gets_a_replicaset_and_gc_removes_it(
    kube_testenv: KubeTestenv, api: client.ApiClient, namespace: str
) -> None:
    if not kube_testenv.controller_manager:
        pytest.skip("kube-controller-manager is not running in this test control plane")
    apps = client.AppsV1Api(api)
    labels = {"app": "web"}
    container = client.V1Container(
        name="web",
        image="registry.invalid/web@sha256:" + "0" * 64,
        security_context=client.V1SecurityContext(
            run_as_non_root=True,
            allow_privilege_escalation=False,
            capabilities=client.V1Capabilities(drop=["ALL"]),
            seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault"),
        ),
    )
    apps.create_namespaced_deployment(
        namespace,
        client.V1Deployment(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1DeploymentSpec(
                replicas=2,
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(
                        automount_service_account_token=False, containers=[container]
                    ),
                ),
            ),
        ),
    )

    def replicasets() -> list[client.V1ReplicaSet]:
        return [
            rs
            for rs in apps.list_namespaced_replica_set(namespace).items
            if any(
                o.kind == "Deployment" and o.name == "web"
                for o in rs.metadata.owner_references or []
            )
        ]

    (rs,) = wait_for("the Deployment's ReplicaSet", replicasets, timeout=60)
    assert rs.spec.replicas == 2
    # The ReplicaSet controller creates the pods (no kubelet runs, so they stay Pending).
    core = client.CoreV1Api(api)

    def two_pods() -> list[client.V1Pod] | None:
        items: list[client.V1Pod] = core.list_namespaced_pod(namespace).items
        return items if len(items) == 2 else None

    pods = wait_for("the ReplicaSet's pods", two_pods, timeout=60)
    assert all(p.status.phase == "Pending" for p in pods)

    # The garbage collector removes what the Deployment owned.
    apps.delete_namespaced_deployment(
        "web", namespace, body=client.V1DeleteOptions(propagation_policy="Background")
    )
    wait_for("the garbage collector to delete the ReplicaSet", lambda: not replicasets(), 60)

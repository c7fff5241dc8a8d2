"""The platform on the node, for the node tests: the operator (kopf, in-process), the gateway
(uvicorn, in-process, Kubernetes backend), real PostgreSQL (pgserver), a real S3 API (moto)
that build pods reach at the node address, and the build Secrets in ``sless-builds``.

Everything listens inside the node's network namespace (the tests run there). Function
builds are kaniko Jobs on the node; function pods run under gVisor.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException
from pydantic import SecretStr

from sless import policies
from sless.config import Settings
from tests.conftest import ADMIN_TOKEN, TEST_SECRETS_KEYS
from tests.kube.test_gateway_kubernetes import _kubernetes_app
from tests.kube.test_operator import RunningOperator, install_crds
from tests.node.support import NODE_IP, REGISTRY, ROOT, Node, wait_for
from tests.support import make_zip

KANIKO_IMAGE = f"{REGISTRY}/sless/kaniko-executor:v1.23.2"
INVOKER_IMAGE = f"{REGISTRY}/sless/invoker:0.1.0"
#: short, so the scale-to-zero test waits seconds, not minutes (other tests' functions may
#: go idle too: their next call wakes them, as for any caller)
IDLE_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))  # inside the node's own network namespace
        return int(s.getsockname()[1])


def s3_server() -> tuple[Any, str]:
    """moto's S3 API on every address of the node's netns: build pods reach it at NODE_IP."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="0.0.0.0", port=port, verbose=False)
    server.start()
    return server, f"http://{NODE_IP}:{port}"


def node_settings(node: Node, s3_endpoint: str, bucket: str, data_dir: Any) -> Settings:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.data_dir = data_dir
    settings.backend = "kubernetes"
    settings.admin.token = SecretStr(ADMIN_TOKEN)
    # Kubernetes mode refuses to start without the tenant secrets' shared key
    settings.secrets.keys = SecretStr(TEST_SECRETS_KEYS)
    settings.gateway.port = free_port()
    k = settings.kubernetes
    k.kubeconfig = node.dir / "kubeconfig"
    k.registry = f"{REGISTRY}/sless"
    k.registry_insecure = True
    k.kaniko_image = KANIKO_IMAGE
    k.invoker_image = INVOKER_IMAGE
    # cron and FunctionJob pods call the gateway by its Service name, as in a cluster
    # (sless-gateway.sless-system.svc, resolved by the node's CoreDNS): no invoke_base_url;
    # gateway_service() points that Service at this in-process gateway
    assert not k.invoke_base_url
    k.idle_timeout_s = IDLE_TIMEOUT_S
    k.activation_timeout_s = 180.0  # a cold pod on 2 shared cores
    k.runtime_images = {rt: node.runtime_image(rt) for rt in ("python3.11", "nodejs20")}
    k.retry_delay_s = 1.0
    k.api_server_cidrs = [f"{NODE_IP}/32"]
    # builds reach the registry and S3 (both at the node address here), nothing else
    k.build_egress = [
        f"{REGISTRY.replace(':', '/32:')}",
        f"{NODE_IP}/32:{httpx.URL(s3_endpoint).port}",
    ]
    settings.s3.bucket = bucket
    settings.s3.endpoint_url = s3_endpoint
    settings.s3.access_key_id = SecretStr("test")
    settings.s3.secret_access_key = SecretStr("test")
    return settings


def build_secrets(api: client.ApiClient, settings: Settings) -> None:
    """What a provider creates in sless-builds: S3 credentials and the registry's config."""
    k = settings.kubernetes
    core = client.CoreV1Api(api)
    try:
        core.create_namespace(policies.builds_namespace(k))
    except ApiException as e:
        if e.status != 409:
            raise
    docker_config = json.dumps({"auths": {}}).encode()
    secrets = [
        {
            "metadata": {"name": k.build_s3_secret},
            "stringData": {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
        },
        {
            "metadata": {"name": k.registry_secret},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(docker_config).decode()},
        },
    ]
    for secret in secrets:
        try:
            core.create_namespaced_secret(k.builds_namespace, secret)
        except ApiException as e:
            if e.status != 409:
                raise


def install_admission(api: client.ApiClient) -> None:
    """deploy/admission.yaml: tenant namespaces admit only gVisor pods."""
    adm = client.AdmissionregistrationV1Api(api)
    for doc in yaml.safe_load_all((ROOT / "deploy" / "admission.yaml").read_text()):
        create = (
            adm.create_validating_admission_policy
            if doc["kind"] == "ValidatingAdmissionPolicy"
            else adm.create_validating_admission_policy_binding
        )
        try:
            create(doc)
        except ApiException as e:
            if e.status != 409:
                raise


class Gateway:
    """The gateway under uvicorn in a thread, in Kubernetes mode."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        import uvicorn

        config = uvicorn.Config(
            _kubernetes_app(settings, database_url),
            host="0.0.0.0",  # inside the node's own network namespace
            port=settings.gateway.port,
            lifespan="on",
            log_level="warning",
            timeout_graceful_shutdown=5,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{settings.gateway.port}"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("gateway did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@contextlib.contextmanager
def running_platform(
    node: Node, api: client.ApiClient, database_url: str, data_dir: Any
) -> Iterator[tuple[Gateway, Settings]]:
    """S3, CRDs, build Secrets, the operator and the gateway; all stopped afterwards."""
    s3, endpoint = s3_server()
    bucket = "code-" + uuid.uuid4().hex[:8]
    try:
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        ).create_bucket(Bucket=bucket)
        settings = node_settings(node, endpoint, bucket, data_dir)
        install_crds(api)
        try:
            client.NodeV1Api(api).create_runtime_class(policies.runtime_class())
        except ApiException as e:
            if e.status != 409:
                raise
        build_secrets(api, settings)
        install_admission(api)
        operator = RunningOperator(settings.model_copy(deep=True))
        operator.start()
        gateway = Gateway(settings, database_url)
        try:
            gateway.start()
            with gateway_service(api, settings):
                yield gateway, settings
        finally:
            gateway.stop()
            operator.stop()
    finally:
        s3.stop()


@contextlib.contextmanager
def gateway_service(api: client.ApiClient, settings: Settings) -> Iterator[None]:
    """Service ``sless-gateway`` in the gateway's namespace, with no selector and one
    EndpointSlice: the in-process gateway at the node address. Cron and FunctionJob pods
    then reach it by the name the operator gives them (resolved by the cluster's DNS), the
    name a gateway pod's Service has in a real install. Replaces one left by the install
    test (whose pods are gone); removed afterwards."""
    k, port = settings.kubernetes, settings.gateway.port
    core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    with contextlib.suppress(ApiException):
        core.create_namespace({"metadata": {"name": k.gateway_namespace}})
    with contextlib.suppress(ApiException):
        core.delete_namespaced_service("sless-gateway", k.gateway_namespace)
    with contextlib.suppress(ApiException):  # left by an interrupted run
        discovery.delete_namespaced_endpoint_slice("sless-gateway-node", k.gateway_namespace)
    wait_for(
        "the previous sless-gateway Service gone",
        lambda: (
            not core.list_namespaced_service(
                k.gateway_namespace, field_selector="metadata.name=sless-gateway"
            ).items
        ),
    )
    core.create_namespaced_service(
        k.gateway_namespace,
        {
            "metadata": {"name": "sless-gateway"},
            "spec": {"ports": [{"name": "http", "port": port, "targetPort": port}]},
        },
    )
    discovery.create_namespaced_endpoint_slice(
        k.gateway_namespace,
        {
            "metadata": {
                "name": "sless-gateway-node",
                "labels": {"kubernetes.io/service-name": "sless-gateway"},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [NODE_IP], "conditions": {"ready": True}}],
            "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        },
    )
    try:
        yield
    finally:
        with contextlib.suppress(ApiException):
            core.delete_namespaced_service("sless-gateway", k.gateway_namespace)
        with contextlib.suppress(ApiException):
            discovery.delete_namespaced_endpoint_slice("sless-gateway-node", k.gateway_namespace)


def allow_invoker_to_gateway(api: client.ApiClient, namespace: str, gateway_port: int) -> None:
    """Here the gateway is a process on the node, not a pod wearing the gateway's labels, so
    the tenant's ``sless-allow-invoker-egress`` (gateway pods only) cannot match it. This
    policy lets the tenant's invoker pods (cron, FunctionJob) reach it at the node address
    (where Service sless-gateway forwards: a NetworkPolicy sees the address after the
    Service's translation), and nothing else: what the gateway pod's own policy would give
    in a cluster. They find it by name: the tenant's own sless-allow-dns lets them ask the
    cluster's DNS."""
    policy = {
        "metadata": {"name": "test-invoker-to-node-gateway"},
        "spec": {
            "podSelector": {"matchLabels": {policies.labels.COMPONENT: "invoker"}},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [{"ipBlock": {"cidr": f"{NODE_IP}/32"}}],
                    "ports": [{"protocol": "TCP", "port": gateway_port}],
                }
            ],
        },
    }
    client.NetworkingV1Api(api).create_namespaced_network_policy(namespace, policy)


def onboard(gateway: Gateway, tenant: str) -> httpx.Client:
    with httpx.Client(
        base_url=gateway.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    ) as admin:
        made = admin.post("/v1/admin/tenants", json={"name": tenant})
    assert made.status_code == 201, made.text
    return httpx.Client(
        base_url=gateway.url,
        headers={"Authorization": f"Bearer {made.json()['token']}"},
        timeout=120,
    )


def deploy(
    tenant: httpx.Client, ns: str, name: str, runtime: str, files: dict[str, str], **spec: Any
) -> dict:
    path = f"/v1/namespaces/{ns}/functions/{name}"
    created = tenant.put(path, json={"runtime": runtime, **spec})
    assert created.status_code in (200, 201), created.text
    uploaded = tenant.post(
        path + "/upload", content=make_zip(files), headers={"Content-Type": "application/zip"}
    )
    assert uploaded.status_code == 202, uploaded.text

    def ready() -> dict | None:
        got = tenant.get(path).json()
        status = got.get("status") or {}
        assert status.get("phase") not in ("Failed", "Rejected"), status
        return got if status.get("phase") == "Ready" else None

    return wait_for(f"{ns}/{name} Ready", ready, timeout_s=600, every_s=2)


def call(gateway: Gateway, ns: str, name: str) -> httpx.Response | None:
    """The function's answer; None while the gateway says it has no ready instance (503:
    Ready means built and deployed, the pod may still be starting; a function scaled to
    zero is held, not refused)."""
    answer = httpx.get(f"{gateway.url}/fn/{ns}/{name}", timeout=300)
    return None if answer.status_code == 503 else answer

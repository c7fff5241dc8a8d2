"""The real gateway in Kubernetes mode, end to end on the real control plane.

Real PostgreSQL (tenants, tokens, invocation history), a real S3 API (code blobs), the real
kube-apiserver (Function resources, EndpointSlices) and the real Python runtime server. The
test plays the two parts no process plays here: the operator (it patches the Function's
status to Ready with its servingSpec) and the node (it runs the runtime server and
registers it in an EndpointSlice of ``fn-<name>``).
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import uuid
import zipfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from kubernetes import client
from pydantic import SecretStr

from sless.backends.kubernetes import make_backend
from sless.config import Settings
from sless.gateway import create_app
from sless.gateway.platform import Platform
from tests.conftest import ADMIN_TOKEN
from tests.kube.test_backend_helpers import (
    GROUP,
    VERSION,
    endpoint_slice,
    function_crd,
    kube_api,
    kube_settings,
    pod_host,
)
from tests.support import make_zip, new_bucket, s3_client, serve_in_thread, wait_for

if TYPE_CHECKING:
    from fastapi import FastAPI

    from tests.kube.conftest import KubeTestenv

__all__ = ["function_crd", "kube_api"]  # fixtures used here

pytestmark = pytest.mark.kube

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "runtimes" / "python3.11" / "server.py"
HELLO = {
    "handler.py": (
        "def handle(event, context):\n"
        "    print('called with', event['query'], flush=True)\n"
        "    return {'hello': event['query'].get('name', 'world'), 'path': event['path'],\n"
        "            'function': context['function'] if isinstance(context, dict)\n"
        "            else getattr(context, 'function', None)}\n"
    )
}


async def _start_platform(settings: Settings, database_url: str) -> Platform:
    try:
        return await Platform.start(settings, database_url)
    except NotImplementedError:
        # Until Platform.start builds the Kubernetes backend itself: start the platform
        # in embedded mode and put the Kubernetes backend in place of the local one.
        local = settings.model_copy(update={"backend": "local"})
        platform = await Platform.start(local, database_url)
        await platform.backend.stop()
        backend = make_backend(settings, platform.db, platform.blobs)
        try:
            await backend.start()
        except BaseException:
            await platform.recorder.close()
            await platform.db.close()
            raise
        platform.backend = backend
        platform.settings = settings
        return platform


def _kubernetes_app(settings: Settings, database_url: str) -> Any:
    """``create_app`` with a lifespan that starts the platform in Kubernetes mode."""
    gateway = create_app(settings, database_url)
    api: FastAPI = gateway.api

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        platform = await _start_platform(settings, database_url)
        app.state.platform = platform
        try:
            yield
        finally:
            await platform.stop()

    api.router.lifespan_context = lifespan
    return gateway


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> str:
    return new_bucket(s3_endpoint)


@pytest.fixture
def kube_gateway(
    settings: Settings,
    database_url: str,
    kube_testenv: KubeTestenv,
    function_crd: str,
    s3_endpoint: str,
    s3_bucket: str,
) -> Iterator[str]:
    """The gateway under uvicorn in a thread, in Kubernetes mode; yields its URL."""
    kube_settings(settings, kube_testenv)
    settings.admin.token = SecretStr(ADMIN_TOKEN)
    settings.s3.bucket = s3_bucket
    settings.s3.endpoint_url = s3_endpoint
    settings.s3.access_key_id = SecretStr("test")
    settings.s3.secret_access_key = SecretStr("test")
    app = _kubernetes_app(settings, database_url)
    with serve_in_thread(app, settings.gateway.port, start_timeout_s=60) as served:
        yield served.url


@dataclass
class Onboarded:
    """A tenant onboarded through the gateway, with its namespace made as the operator
    would (no operator runs in these tests)."""

    name: str
    namespace: str
    admin: httpx.Client
    client: httpx.Client


@pytest.fixture
def kube_tenant(kube_gateway: str, kube_api: client.ApiClient) -> Iterator[Onboarded]:
    """A fresh tenant onboarded through the gateway, its namespace made; afterwards both
    clients are closed, the tenant offboarded and the namespace deleted."""
    tenant = "k" + uuid.uuid4().hex[:8]
    namespace = f"sless-{tenant}"
    core = client.CoreV1Api(kube_api)
    admin = httpx.Client(
        base_url=kube_gateway, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    )
    onboarded = admin.post("/v1/admin/tenants", json={"name": tenant})
    assert onboarded.status_code == 201, onboarded.text
    assert onboarded.json()["namespace"] == namespace
    # no operator runs here: make the namespace it would make from the Tenant resource
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    tenant_client = httpx.Client(
        base_url=kube_gateway,
        headers={"Authorization": f"Bearer {onboarded.json()['token']}"},
        timeout=120,
    )
    try:
        yield Onboarded(tenant, namespace, admin, tenant_client)
    finally:
        tenant_client.close()
        admin.delete(f"/v1/admin/tenants/{tenant}")
        admin.close()
        core.delete_namespace(namespace)


@pytest.fixture
def runtime_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """The Python runtime server serving HELLO inside the test host's namespace."""
    code = tmp_path / "code"
    code.mkdir()
    with zipfile.ZipFile(io.BytesIO(make_zip(HELLO))) as archive:
        archive.extractall(code)
    host = pod_host()
    address = host.address
    with host.listen() as probe:  # a port that is free inside the namespace
        port = probe.getsockname()[1]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PORT": str(port),
        "SLESS_CODE_DIR": str(code),
        "SLESS_FUNCTION": "hello",
        "SLESS_CONCURRENCY": "2",
    }
    log = (tmp_path / "runtime.log").open("wb")
    proc = subprocess.Popen(
        host.command(sys.executable, str(RUNTIME)), env=env, stdout=log, stderr=subprocess.STDOUT
    )

    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError((tmp_path / "runtime.log").read_text())
        with socket.socket() as s:
            return s.connect_ex((address, port)) == 0

    try:
        wait_for("the runtime server to listen", listening, timeout=30)
        yield address, port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def test_deploy_and_invoke_through_the_kubernetes_backend(
    kube_gateway: str,
    kube_api: client.ApiClient,
    runtime_server: tuple[str, int],
    s3_endpoint: str,
    s3_bucket: str,
    kube_tenant: Onboarded,
) -> None:
    tenant, namespace = kube_tenant.name, kube_tenant.namespace
    acme = kube_tenant.client
    custom = client.CustomObjectsApi(kube_api)
    # onboarding made the Tenant resource, from which the operator makes the namespace
    resource = custom.get_cluster_custom_object(GROUP, VERSION, "tenants", tenant)
    assert resource["spec"] == {}
    assert resource["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "sless"
    path = f"/v1/namespaces/{namespace}/functions/hello"
    created = acme.put(path, json={"env": {"GREETING": "hi"}, "concurrency": 2})
    assert created.status_code == 201, created.text
    assert created.json()["status"]["phase"] == "Pending"
    assert acme.put(path, json={"env": {"GREETING": "hi"}, "concurrency": 2}).status_code == 200

    # not served before the operator says so
    assert httpx.get(f"{kube_gateway}/fn/{namespace}/hello").status_code == 503

    uploaded = acme.post(
        path + "/upload",
        content=make_zip(HELLO),
        headers={"Content-Type": "application/zip"},
    )
    assert uploaded.status_code == 202, uploaded.text
    assert uploaded.json()["phase"] == "Pending"
    sha256 = uploaded.json()["sha256"]

    resource = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "functions", "hello")
    code = resource["spec"]["code"]
    assert code["sha256"] == sha256
    assert resource["spec"]["env"] == {"GREETING": "hi"}
    assert resource["status"]["phase"] == "Pending"
    assert resource["status"]["validation"]["verdict"] == "allow"
    # the blob the operator will build from is in S3
    s3 = s3_client(s3_endpoint)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=s3_bucket)["Contents"]]
    assert keys == [code["blob_key"]]
    assert acme.get(path + "/validation").status_code == 200

    # the operator's part: the build succeeded, this spec now serves
    custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "functions",
        "hello",
        {
            "status": {
                "phase": "Ready",
                "observed_sha256": sha256,
                "servingSpec": resource["spec"],
                "message": "",
            }
        },
    )
    ready = acme.get(path).json()
    assert ready["status"]["phase"] == "Ready"
    assert ready["status"]["observed_sha256"] == sha256

    # Ready but no instance yet: not ready to serve
    answer = wait_for(
        "the gateway to see the serving spec",
        lambda: (r := httpx.get(f"{kube_gateway}/fn/{namespace}/hello")).status_code != 404 and r,
    )
    assert answer.status_code == 503
    assert "no ready instances" in answer.json()["error"]["message"]

    # the node's part: the instance listens, the EndpointSlice points at it
    address, port = runtime_server
    client.DiscoveryV1Api(kube_api).create_namespaced_endpoint_slice(
        namespace, endpoint_slice("fn-hello-abcde", "fn-hello", [(address, True)], port)
    )
    response = wait_for(
        "the gateway to invoke the function",
        lambda: (
            (r := httpx.get(f"{kube_gateway}/fn/{namespace}/hello/sub?name=Ada")).status_code == 200
            and r
        ),
    )
    body = response.json()
    assert body["hello"] == "Ada"
    assert body["path"] == "/sub"
    invocation_id = response.headers["x-sless-invocation-id"]

    # a disabled http trigger closes /fn/ (the gateway watches the Trigger resources)
    web = f"/v1/namespaces/{namespace}/triggers/web"
    trigger = {"type": "http", "function": "hello", "enabled": False}
    assert acme.put(web, json=trigger).status_code == 201
    refused = wait_for(
        "the gateway to refuse the disabled function",
        lambda: (r := httpx.get(f"{kube_gateway}/fn/{namespace}/hello")).status_code == 403 and r,
    )
    assert refused.json()["error"]["code"] == "http_trigger_disabled"
    assert acme.put(web, json={**trigger, "enabled": True}).status_code == 200
    wait_for(
        "the gateway to serve it again",
        lambda: httpx.get(f"{kube_gateway}/fn/{namespace}/hello").status_code == 200,
    )
    assert acme.delete(web).status_code == 200

    rows = wait_for(
        "the invocation to be recorded",
        lambda: [
            row
            for row in acme.get(
                f"/v1/namespaces/{namespace}/invocations", params={"function": "hello"}
            ).json()["invocations"]
            if row["id"] == invocation_id
        ],
    )
    assert rows[0]["status"] == 200
    assert rows[0]["tenant"] == tenant

    # logs: no pods run here, and the answer says so
    logs = acme.get(path + "/logs")
    assert logs.status_code == 200
    assert "no running instances" in logs.text

    # another tenant's namespace is invisible
    assert acme.get("/v1/namespaces/sless-someone-else/functions").status_code == 404

    deleted = acme.delete(path)
    assert deleted.status_code == 200
    assert acme.get(path).status_code == 404
    wait_for(
        "invocations to stop",
        lambda: httpx.get(f"{kube_gateway}/fn/{namespace}/hello").status_code == 404,
    )


def test_a_refused_upload_reads_rejected_or_leaves_the_serving_version_ready(
    kube_gateway: str, kube_api: client.ApiClient, kube_tenant: Onboarded
) -> None:
    """The same phases as in embedded mode (tests/integration/test_bad_input.py): a function
    with no code and a refused upload is Rejected with the reason; one that serves stays
    Ready on its version, the refused upload reported in its validation."""
    namespace, acme = kube_tenant.namespace, kube_tenant.client
    custom = client.CustomObjectsApi(kube_api)
    zip_slip = make_zip({**HELLO, "../../etc/evil.py": "x = 1\n"})
    headers = {"Content-Type": "application/zip"}

    path = f"/v1/namespaces/{namespace}/functions/broken"
    assert acme.put(path, json={}).status_code == 201
    assert acme.post(path + "/upload", content=zip_slip, headers=headers).status_code == 422
    status = acme.get(path).json()["status"]
    assert status["phase"] == "Rejected", status
    assert status["message"].startswith("upload rejected: "), status
    assert status["validation"]["verdict"] == "reject"
    # a spec written again keeps it Rejected (the operator has nothing to build)
    assert acme.put(path, json={"memory_mb": 256}).status_code == 200
    assert acme.get(path).json()["status"]["phase"] == "Rejected"

    path = f"/v1/namespaces/{namespace}/functions/serving"
    assert acme.put(path, json={}).status_code == 201
    uploaded = acme.post(path + "/upload", content=make_zip(HELLO), headers=headers)
    assert uploaded.status_code == 202, uploaded.text
    where = (GROUP, VERSION, namespace, "functions", "serving")
    resource = custom.get_namespaced_custom_object(*where)
    ready = {"phase": "Ready", "message": "", "servingSpec": resource["spec"]}
    # the operator's part: it built and deployed v1
    custom.patch_namespaced_custom_object_status(*where, {"status": ready})
    assert acme.post(path + "/upload", content=zip_slip, headers=headers).status_code == 422
    status = acme.get(path).json()["status"]
    assert status["phase"] == "Ready", status
    assert status["message"] == ""
    assert status["version"] == "v1"
    assert status["validation"]["verdict"] == "reject"

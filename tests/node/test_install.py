"""The whole platform installed from deploy/ on the real node: ``kubectl apply -k`` of an
overlay that only names the image (the platform's own, built from this checkout like the
runtime images: ``scripts/kube-testenv push-platform``), the settings of this node and the
Secrets a provider creates. No in-process gateway or operator runs here (the module-scoped
``stack`` of the other modules is gone).

- every Deployment (gateway 2, operator 2, sless events 2) becomes available in
  sless-system, whose Pod Security "restricted" admitted their pods;
- the gateway's PodDisruptionBudget allows one disruption;
- through a gateway pod, the provider onboards a tenant; the active operator makes its
  namespace;
- failover: the active operator (highest priority in the ClusterKopfPeering) is deleted;
  the test measures how long until a new tenant's namespace appears, made by the other;
  then the active one's container is SIGKILLed (no clean exit leaves its peering record
  behind) and the same is measured again.

PostgreSQL (the tests' pgserver, a unix socket) is relayed to the node address over TCP;
S3 is moto on the node address. Pods reach both at the node address only (a policy of the
overlay, as a provider narrows ``sless-platform-egress`` to its own addresses).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.conftest import ADMIN_TOKEN
from tests.node.stack import INVOKER_IMAGE, KANIKO_IMAGE, deploy, s3_server
from tests.node.support import NODE_IP, REGISTRY, ROOT, Node, wait_for

SYSTEM = "sless-system"
PUBLIC_URL = "http://sless-gateway.sless-system.svc:8080"
HELLO = {
    "handler.py": (
        "import os\ndef handle(event, context):\n    return {'release': os.uname().release}\n"
    )
}
SCRIPT = ROOT / "scripts" / "kube-testenv"

# image build and push, pulls and six cold pods on 2 shared cores
pytestmark = pytest.mark.timeout(1500)


@contextlib.contextmanager
def tcp_relay(unix_socket: str) -> Iterator[int]:
    """NODE_IP:port → a unix socket (the tests' PostgreSQL), one thread per connection."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((NODE_IP, 0))
    listener.listen(64)
    stop = threading.Event()

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def relay(conn: socket.socket, upstream: socket.socket) -> None:
        back = threading.Thread(target=pump, args=(upstream, conn), daemon=True)
        back.start()
        pump(conn, upstream)
        back.join()
        conn.close()
        upstream.close()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX)
            try:
                upstream.connect(unix_socket)
            except OSError:
                conn.close()
                upstream.close()
                continue
            threading.Thread(target=relay, args=(conn, upstream), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        listener.close()


def _postgres_socket(postgres: Any) -> tuple[str, str]:
    """(unix socket path, a fresh database's name) of the tests' pgserver."""
    uri: str = postgres.get_uri()
    query = uri.partition("?")[2]
    host = dict(part.split("=", 1) for part in query.split("&"))["host"]
    port = uri.partition("@")[2].partition("/")[0].rpartition(":")[2] or "5432"
    name = "inst_" + uuid.uuid4().hex[:10]
    postgres.psql(f"CREATE DATABASE {name};")
    return f"{host}/.s.PGSQL.{port}", name


def _secret(name: str, namespace: str, data: dict[str, str], kind: str = "Opaque") -> dict:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": kind,
        "metadata": {"name": name, "namespace": namespace},
        "data": encoded,
    }


def _api_endpoint(api: Any) -> tuple[str, int]:
    """Where the kubernetes Service forwards to (what a NetworkPolicy sees)."""
    endpoints = client.CoreV1Api(api).read_namespaced_endpoints("kubernetes", "default")
    [subset] = endpoints.subsets
    return subset.addresses[0].ip, subset.ports[0].port


def _overlay(
    tmp: Path, api: Any, image: str, db: tuple[str, int, str], s3_endpoint: str, bucket: str
) -> Path:
    """The documented overlay (overlays/example), filled in as a provider does: every value
    marked CHANGE, nothing added but the Secrets docs/kubernetes.md creates with kubectl."""
    example = ROOT / "overlays" / "example"
    (tmp / "secrets").mkdir(parents=True)
    name, _, digest = image.partition("@")
    kustomization = yaml.safe_load((example / "kustomization.yaml").read_text())
    kustomization["resources"] = [
        os.path.relpath(ROOT / "deploy", tmp) if r == "../../deploy" else r
        for r in kustomization["resources"]
    ] + ["provider.yaml"]
    kustomization["images"] = [
        {"name": "sless", "newName": name.rpartition(":")[0], "digest": digest}
    ]
    (tmp / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))

    settings = yaml.safe_load((example / "settings.yaml").read_text())
    assert "SLESS_GATEWAY_PUBLIC_URL" in settings["data"]
    assert "SLESS_KUBERNETES_BUILD_EGRESS" in settings["data"]
    s3_url = httpx.URL(s3_endpoint)
    settings["data"].update(
        {
            "SLESS_GATEWAY_PUBLIC_URL": PUBLIC_URL,
            "SLESS_S3_BUCKET": bucket,
            "SLESS_S3_ENDPOINT_URL": s3_endpoint,
            "SLESS_KUBERNETES_REGISTRY": f"{REGISTRY}/sless",
            "SLESS_KUBERNETES_REGISTRY_INSECURE": "true",
            "SLESS_KUBERNETES_KANIKO_IMAGE": KANIKO_IMAGE,
            "SLESS_KUBERNETES_INVOKER_IMAGE": INVOKER_IMAGE,
            "SLESS_KUBERNETES_RUNTIME_IMAGES": json.dumps(
                {rt: f"{REGISTRY}/sless/runtime-{rt}:0.1.0" for rt in ("python3.11", "nodejs20")}
            ),
            "SLESS_KUBERNETES_API_SERVER_CIDRS": json.dumps([f"{NODE_IP}/32"]),
            # the registry and S3, both at the node address here
            "SLESS_KUBERNETES_BUILD_EGRESS": json.dumps(
                [f"{NODE_IP}/32:5000", f"{s3_url.host}/32:{s3_url.port}"]
            ),
            "SLESS_KUBERNETES_OPERATOR_PEERING_LIFETIME_S": "15",
        }
    )
    (tmp / "settings.yaml").write_text(yaml.safe_dump(settings))

    # the egress of this cluster: the API server, PostgreSQL and S3 all at the node address
    api_ip, api_port = _api_endpoint(api)
    s3_host = httpx.URL(s3_endpoint)
    policy = yaml.safe_load((example / "cluster.yaml").read_text())
    policy["spec"]["egress"] = [
        {"to": [{"ipBlock": {"cidr": f"{ip}/32"}}], "ports": [{"protocol": "TCP", "port": port}]}
        for ip, port in ((api_ip, api_port), db[:2], (s3_host.host, s3_host.port))
    ]
    (tmp / "cluster.yaml").write_text(yaml.safe_dump(policy))

    db_url = f"postgresql://postgres@{db[0]}:{db[1]}/{db[2]}"
    for file, values in {
        "database.env": {"url": db_url},
        "s3.env": {"access_key_id": "test", "secret_access_key": "test"},
        "build-s3.env": {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
    }.items():
        assert (example / "secrets" / file).exists()
        (tmp / "secrets" / file).write_text("".join(f"{k}={v}\n" for k, v in values.items()))

    keys = "k1:" + base64.b64encode(os.urandom(32)).decode()
    docs = [  # what docs/kubernetes.md creates with kubectl create secret
        _secret("sless-admin", SYSTEM, {"token": ADMIN_TOKEN}),
        _secret("sless-secrets", SYSTEM, {"keys": keys}),
        _secret(
            "sless-registry",
            "sless-builds",
            {".dockerconfigjson": json.dumps({"auths": {}})},
            "kubernetes.io/dockerconfigjson",
        ),
    ]
    (tmp / "provider.yaml").write_text(yaml.safe_dump_all(docs))
    return tmp


def _ctr(*args: str) -> None:
    """ctr against the node's containerd (its socket: tools/kube-testenv/node.bash)."""
    binary = subprocess.run(
        [str(SCRIPT), "bin"], capture_output=True, text=True, check=True
    ).stdout.strip()
    node_dir = os.path.realpath(os.environ.get("SLESS_NODE_DIR", "/tmp/sless-node"))
    node_id = hashlib.sha256(node_dir.encode()).hexdigest()[:8]
    socket_path = f"/run/sless-node-{node_id}/containerd.sock"
    done = subprocess.run(
        [f"{binary}/ctr", "-a", socket_path, "-n", "k8s.io", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _kubectl(node: Node, *args: str, timeout: float = 300) -> str:
    binary = subprocess.run(
        [str(SCRIPT), "bin"], capture_output=True, text=True, check=True
    ).stdout.strip()
    proc = subprocess.run(
        [f"{binary}/kubectl", "--kubeconfig", str(node.dir / "kubeconfig"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"kubectl {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _available(api: Any, name: str) -> int:
    deployment = client.AppsV1Api(api).read_namespaced_deployment(name, SYSTEM)
    return int(deployment.status.available_replicas or 0)


def _pods(api: Any, component: str) -> list[Any]:
    selector = f"app.kubernetes.io/component={component}" if component else ""
    items = client.CoreV1Api(api).list_namespaced_pod(SYSTEM, label_selector=selector).items
    return [p for p in items if not p.metadata.deletion_timestamp]


def _active_operator(api: Any) -> str | None:
    """The pod whose peering record has the highest priority (kopf: the others pause)."""
    peering = client.CustomObjectsApi(api).get_cluster_custom_object(
        "kopf.dev", "v1", "clusterkopfpeerings", "sless-operator"
    )
    peers = (peering.get("status") or {}).items()
    live = {p.metadata.name for p in _pods(api, "operator")}
    ranked = sorted(
        ((info.get("priority", 0), name) for name, info in peers if name in live), reverse=True
    )
    return ranked[0][1] if len(ranked) >= 2 else None


def _onboard(gateway_url: str, tenant: str) -> str:
    """The new tenant's token."""
    made = httpx.post(
        f"{gateway_url}/v1/admin/tenants",
        json={"name": tenant},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=60,
    )
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def _namespace_made(api: Any, name: str) -> bool:
    try:
        client.CoreV1Api(api).read_namespace(name)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    return True


def test_the_platform_installs_from_deploy_and_the_operator_fails_over(
    node: Node,
    api: Any,
    postgres: Any,
    tmp_path: Path,
    record_property: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()
    pushed = subprocess.run(
        [str(SCRIPT), "push-platform", str(node.dir)], capture_output=True, text=True, check=False
    )
    assert pushed.returncode == 0, pushed.stderr[-3000:]
    image = pushed.stdout.strip().splitlines()[-1]
    assert "@sha256:" in image, pushed.stdout
    image_s = time.monotonic() - started

    unix_socket, database = _postgres_socket(postgres)
    s3, s3_endpoint = s3_server()
    bucket = "inst-" + uuid.uuid4().hex[:8]
    boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    ).create_bucket(Bucket=bucket)
    overlay = tmp_path / "overlay"
    with tcp_relay(unix_socket) as pg_port:
        _overlay(overlay, api, image, (NODE_IP, pg_port, database), s3_endpoint, bucket)
        # server-side: the CRDs and namespaces the other modules' stacks made stay as they are
        _kubectl(node, "apply", "-k", str(overlay), "--server-side", "--force-conflicts")
        try:
            _installed_and_failing_over(api, record_property, capsys, image_s)
        finally:
            # the next modules run their own operator in-process: none of these may remain
            with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
                _kubectl(node, "delete", "-n", SYSTEM, "deployment", "--all", "--wait=true")
            wait_for("sless-system's pods gone", lambda: not _pods(api, ""), timeout_s=120)
            s3.stop()


def _installed_and_failing_over(
    api: Any, record_property: Any, capsys: pytest.CaptureFixture[str], image_s: float
) -> None:
    applied = time.monotonic()
    for name in ("sless-gateway", "sless-operator", "sless-events"):
        wait_for(f"{name} available", lambda n=name: _available(api, n) == 2, timeout_s=900)
    available_s = time.monotonic() - applied
    wait_for("the gateway's PDB allowing one disruption", lambda: _pdb_allowed(api) == 1)
    for pod in _pods(api, "gateway") + _pods(api, "operator") + _pods(api, "events"):
        [container] = pod.spec.containers
        assert container.security_context.read_only_root_filesystem is True
        assert container.security_context.allow_privilege_escalation is False
        assert pod.spec.security_context.run_as_non_root is True
        assert container.resources.requests
        assert container.resources.limits
        assert container.liveness_probe
        assert container.readiness_probe

    gateway_ip = _pods(api, "gateway")[0].status.pod_ip
    gateway_url = f"http://{gateway_ip}:8080"
    assert httpx.get(f"{gateway_url}/readyz", timeout=10).status_code == 200
    first = "inst" + uuid.uuid4().hex[:6]
    _onboard(gateway_url, first)
    wait_for("the first tenant's namespace", lambda: _namespace_made(api, f"sless-{first}"))

    active = wait_for("two peered operators", lambda: _active_operator(api), timeout_s=120)
    killed = time.monotonic()
    client.CoreV1Api(api).delete_namespaced_pod(active, SYSTEM)
    second = "inst" + uuid.uuid4().hex[:6]
    token = _onboard(gateway_url, second)
    wait_for(
        "the second tenant's namespace (by the other operator)",
        lambda: _namespace_made(api, f"sless-{second}"),
        timeout_s=180,
        every_s=0.2,
    )
    failover_s = time.monotonic() - killed
    assert active not in {p.metadata.name for p in _pods(api, "operator")}

    # a hard kill: the active operator's container SIGKILLed, so no clean exit removes its
    # peering record; kubelet restarts the container in the same pod
    active = wait_for("two peered operators again", lambda: _active_operator(api), timeout_s=300)
    pod = client.CoreV1Api(api).read_namespaced_pod(active, SYSTEM)
    [status] = pod.status.container_statuses
    restarts = status.restart_count
    killed = time.monotonic()
    _ctr("tasks", "kill", "-s", "SIGKILL", status.container_id.partition("://")[2])
    third = "inst" + uuid.uuid4().hex[:6]
    _onboard(gateway_url, third)
    wait_for(
        "the third tenant's namespace (after the SIGKILL)",
        lambda: _namespace_made(api, f"sless-{third}"),
        timeout_s=300,
        every_s=0.2,
    )
    hard_failover_s = time.monotonic() - killed
    after = client.CoreV1Api(api).read_namespaced_pod(active, SYSTEM)
    assert after.status.container_statuses[0].restart_count > restarts, "not killed"

    record_property("platform_image_s", round(image_s, 1))
    record_property("platform_available_s", round(available_s, 1))
    record_property("operator_failover_s", round(failover_s, 2))
    record_property("operator_sigkill_failover_s", round(hard_failover_s, 2))
    with capsys.disabled():
        print(
            f"\n[node figures] platform image built and pushed in {image_s:.1f} s; all six"
            f" pods available {available_s:.1f} s after kubectl apply -k; operator failover"
            f" (active pod deleted → the other made a new tenant's namespace): {failover_s:.2f} s;"
            f" after a SIGKILL of the active operator: {hard_failover_s:.2f} s"
        )
    _a_function_through_the_installed_platform(gateway_url, second, token)


def _a_function_through_the_installed_platform(gateway_url: str, tenant: str, token: str) -> None:
    """Upload (validated by the image's semgrep), build by the operator that took over,
    and a call through the gateway pod: 200 from a pod under gVisor."""
    ns = f"sless-{tenant}"
    with httpx.Client(
        base_url=gateway_url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    ) as acme:
        wait_for("the tenant namespace", lambda: acme.get("/v1/whoami").status_code == 200)
        deploy(acme, ns, "hello", "python3.11", HELLO)
        # tenants are shown the install's public URL (the overlay's), not the bind address
        shown = acme.get(f"/v1/namespaces/{ns}/functions/hello").json()["url"]
        assert shown == f"{PUBLIC_URL}/fn/{ns}/hello", shown
        answer = wait_for("hello's answer", lambda: call_at(gateway_url, ns, "hello"), every_s=1)
        assert answer.status_code == 200, answer.text
        assert answer.json()["release"].endswith("-gvisor"), answer.json()
        _a_job_and_an_async_call(acme, gateway_url, ns)
        acme.delete(f"/v1/namespaces/{ns}/functions/hello")


def _a_job_and_an_async_call(acme: httpx.Client, gateway_url: str, ns: str) -> None:
    """The installed platform's other ways in: a FunctionJob's pod calls the gateway by the
    Service name the install gives it (sless-gateway.sless-system.svc, through the node's
    CoreDNS and the tenant's allow-dns), and an asynchronous call is drawn from the queue by
    the events deployment and recorded."""
    job = f"/v1/namespaces/{ns}/jobs/once"
    made = acme.put(job, json={"function": "hello", "run_id": 1})
    assert made.status_code == 201, made.text

    def finished() -> dict[str, Any] | None:
        got = dict(acme.get(job).json().get("status") or {})
        return got if got.get("phase") in ("Succeeded", "Failed") else None

    run = wait_for("the job's run", finished, timeout_s=300, every_s=2)
    assert run["phase"] == "Succeeded", run
    assert json.loads(run["result"])["release"].endswith("-gvisor"), run
    assert acme.delete(job).status_code == 200

    queued = httpx.post(
        f"{gateway_url}/fn/{ns}/hello", headers={"X-Sless-Async": "true"}, timeout=30
    )
    assert queued.status_code == 202, queued.text
    call = queued.json()["invocation_id"]

    def recorded() -> dict[str, Any] | None:
        row = acme.get(f"/v1/namespaces/{ns}/invocations/{call}")
        done = row.status_code == 200 and row.json().get("status") not in (None, 202)
        return row.json() if done else None

    record = wait_for("the async call's record", recorded, timeout_s=300, every_s=1)
    assert record["status"] == 200, record


def call_at(gateway_url: str, ns: str, name: str) -> httpx.Response | None:
    answer = httpx.get(f"{gateway_url}/fn/{ns}/{name}", timeout=300)
    return None if answer.status_code == 503 else answer


def _pdb_allowed(api: Any) -> int:
    pdb = client.PolicyV1Api(api).read_namespaced_pod_disruption_budget("sless-gateway", SYSTEM)
    return int(pdb.status.disruptions_allowed or 0) if pdb.status else 0

"""RabbitMQ triggers in Kubernetes mode: the ``sless events`` process on the real control
plane, a real RabbitMQ and a real PostgreSQL.

Trigger custom resources say what to consume, the tenants' secrets (PostgreSQL) hold the
broker URLs, and calls go to the function's pod through its EndpointSlice. No kubelet runs,
so the test plays the operator (the Function's ``status.servingSpec``) and the node: the
"pod" is an HTTP server of the test's own on the veth test address, registered in an
EndpointSlice of ``fn-<name>``, which records every call it gets.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncpg
import httpx
import pytest
import yaml
from kubernetes import client, utils
from pydantic import SecretStr

from sless.config import Settings
from sless.events import Events, EventsProcess
from sless.models import FunctionSpec
from sless.store import SecretRepository
from sless.store.crypto import parse_keys
from tests.conftest import ADMIN_TOKEN, TEST_BROKER, TEST_SECRETS_KEYS
from tests.integration.events.broker import Broker, queue, rabbitmq
from tests.kube.test_backend_helpers import (
    GROUP,
    VERSION,
    endpoint_slice,
    function_crd,
    kube_api,
    kube_settings,
    pod_host,
    tenant_namespace,
)
from tests.kube.test_gateway_kubernetes import kube_gateway, s3_bucket
from tests.kube.test_policies_rbac import allowed
from tests.support import await_for

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

# fixtures used here
__all__ = [
    "function_crd",
    "kube_api",
    "kube_gateway",
    "queue",
    "rabbitmq",
    "s3_bucket",
    "tenant_namespace",
]

pytestmark = pytest.mark.kube

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
EVENTS_ACCOUNT = "system:serviceaccount:sless-system:sless-events"


class FakePod:
    """A function's pod: records each call, waits ``delay`` seconds, answers ``status``."""

    def __init__(self) -> None:
        self.status = 200
        self.delay = 0.0
        self.answered = 0
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        host = pod_host()
        self.address = host.address
        sock = host.listen()
        self.port = sock.getsockname()[1]
        pod = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with pod._lock:
                    pod.calls.append(
                        {
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                        }
                    )
                    status, delay = pod.status, pod.delay
                time.sleep(delay)
                answer = json.dumps({"ok": status < 400}).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                with pod._lock:
                    pod.answered += 1

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        # serves on the socket made inside the test host's namespace
        self._server = ThreadingHTTPServer((self.address, self.port), Handler, False)
        self._server.socket.close()
        self._server.socket = sock
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def ids(self) -> list[str]:
        with self._lock:
            return [str(c["headers"].get("sless-message-id")) for c in self.calls]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def pod() -> Iterator[FakePod]:
    started = FakePod()
    yield started
    started.close()


@pytest.fixture
def settings(settings: Settings) -> Settings:
    events = settings.events
    events.scheduler_interval_s = 0.5
    events.retry_base_s = 0.2
    events.retry_max_s = 1.0
    settings.gateway.shutdown_grace_s = 5.0
    settings.secrets.keys = SecretStr(TEST_SECRETS_KEYS)
    return settings


@pytest.fixture
async def process(
    settings: Settings, database_url: str, kube_testenv: KubeTestenv, function_crd: str
) -> AsyncIterator[EventsProcess]:
    """The ``sless events`` process, in this test's event loop (so caplog sees its logs)."""
    started = EventsProcess(kube_settings(settings, kube_testenv), database_url)
    await started.start()
    yield started
    await started.stop()


@pytest.fixture(scope="module")
def events_account(kube_api: client.ApiClient) -> str:
    """deploy/namespaces.yaml and deploy/rbac/events.yaml applied: the process's account."""
    for path in ("namespaces.yaml", "rbac/events.yaml"):
        for doc in yaml.safe_load_all((DEPLOY / path).read_text()):
            try:
                utils.create_from_dict(kube_api, doc)
            except utils.FailToCreateError as e:
                if any(getattr(x, "status", None) != 409 for x in e.api_exceptions):
                    raise
    return EVENTS_ACCOUNT


def events_kubeconfig(kube_api: client.ApiClient, kube_testenv: KubeTestenv, path: Path) -> Path:
    """A kubeconfig that authenticates as the sless-events service account (a bound token
    from the TokenRequest API, as a pod's projected token would be)."""
    token = client.CoreV1Api(kube_api).create_namespaced_service_account_token(
        "sless-events", "sless-system", {"spec": {"expirationSeconds": 3600}}
    )
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "testenv",
                "cluster": {
                    "server": kube_testenv.server,
                    "certificate-authority": str(kube_testenv.ca_file),
                },
            }
        ],
        "users": [{"name": "sless-events", "user": {"token": token.status.token}}],
        "contexts": [{"name": "events", "context": {"cluster": "testenv", "user": "sless-events"}}],
        "current-context": "events",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def test_the_events_account_reads_triggers_functions_and_endpointslices_only(
    kube_api: client.ApiClient, function_crd: str, events_account: str
) -> None:
    for verb in ("get", "list", "watch"):
        for resource in ("triggers", "functions"):
            assert allowed(kube_api, events_account, verb, resource, GROUP), (verb, resource)
        assert allowed(kube_api, events_account, verb, "endpointslices", "discovery.k8s.io")
    refused = [
        ("create", "triggers", GROUP, None),
        ("update", "triggers", GROUP, None),
        ("patch", "functions", GROUP, "status"),
        ("delete", "functions", GROUP, None),
        ("get", "secrets", "", None),
        ("list", "pods", "", None),
        ("create", "endpointslices", "discovery.k8s.io", None),
        ("list", "tenants", GROUP, None),
    ]
    for verb, resource, group, subresource in refused:
        assert not allowed(
            kube_api, events_account, verb, resource, group, subresource=subresource
        ), (verb, resource, subresource)


def serve_function(kube_api: client.ApiClient, namespace: str, name: str, pod: FakePod) -> None:
    """The operator's part (the Function serves its spec) and the node's (a ready pod)."""
    custom = client.CustomObjectsApi(kube_api)
    spec = FunctionSpec(timeout_s=10).model_dump(mode="json")
    try:
        custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "functions",
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": "Function",
                "metadata": {"name": name},
                "spec": spec,
            },
        )
    except client.exceptions.ApiException as e:
        if e.status != 409:  # the gateway created it
            raise
    custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "functions",
        name,
        {"status": {"phase": "Ready", "servingSpec": spec, "message": ""}},
    )
    client.DiscoveryV1Api(kube_api).create_namespaced_endpoint_slice(
        namespace,
        endpoint_slice(f"fn-{name}-x1", f"fn-{name}", [(pod.address, True)], pod.port),
    )


def put_trigger(
    kube_api: client.ApiClient, namespace: str, name: str, spec: dict[str, Any]
) -> None:
    """Create or replace a Trigger resource, as the gateway (or kubectl) would."""
    custom = client.CustomObjectsApi(kube_api)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Trigger",
        "metadata": {"name": name},
        "spec": spec,
    }
    try:
        current = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, "triggers", name)
    except client.exceptions.ApiException as e:
        if e.status != 404:
            raise
        custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "triggers", body)
        return
    current["spec"] = spec
    custom.replace_namespaced_custom_object(GROUP, VERSION, namespace, "triggers", name, current)


def delete_trigger(kube_api: client.ApiClient, namespace: str, name: str) -> None:
    client.CustomObjectsApi(kube_api).delete_namespaced_custom_object(
        GROUP, VERSION, namespace, "triggers", name
    )


async def put_secret(db: asyncpg.Pool, namespace: str, name: str, value: str) -> None:
    """A tenant's secret, as ``PUT .../secrets/{name}`` writes it (the tenant row first:
    onboarding writes it in a real setup)."""
    await db.execute(
        "INSERT INTO tenants (name, namespace) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        namespace.removeprefix("sless-"),
        namespace,
    )
    cipher = parse_keys(TEST_SECRETS_KEYS)
    await SecretRepository(db, cipher).put(namespace, name, SecretStr(value))


async def records(db: asyncpg.Pool | str, namespace: str, function: str) -> list[dict[str, Any]]:
    query = (
        "SELECT id, status, trigger FROM invocations WHERE namespace = $1 AND function = $2"
        " ORDER BY started_at"
    )
    if isinstance(db, str):
        conn = await asyncpg.connect(db)
        try:
            rows = await conn.fetch(query, namespace, function)
        finally:
            await conn.close()
    else:
        rows = await db.fetch(query, namespace, function)
    return [dict(r.items()) for r in rows]


async def consuming(process: EventsProcess, namespace: str, name: str) -> None:
    assert process.consumers is not None
    consumers = process.consumers
    await await_for(
        f"the consumer of {name}",
        lambda: (c := consumers.consumer(namespace, name)) is not None and c.consuming.is_set(),
    )


def assert_no_secret(caplog: pytest.LogCaptureFixture, broker: Broker) -> None:
    assert caplog.records, "nothing was logged: the check would prove nothing"
    assert broker.password not in caplog.text
    for record in caplog.records:
        assert broker.password not in record.getMessage()
        assert broker.password not in repr(record.args)


async def test_a_message_invokes_the_function_once_through_its_pod_and_is_acked(
    kube_gateway: str,
    process: EventsProcess,
    kube_api: client.ApiClient,
    rabbitmq: Broker,
    queue: str,
    pod: FakePod,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    tenant = "k" + uuid.uuid4().hex[:8]
    ns = f"sless-{tenant}"
    admin = httpx.AsyncClient(
        base_url=kube_gateway, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    )
    onboarded = await admin.post("/v1/admin/tenants", json={"name": tenant})
    assert onboarded.status_code == 201, onboarded.text
    # the operator creates the namespace from the Tenant resource; no operator runs here
    client.CoreV1Api(kube_api).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=ns))
    )
    acme = httpx.AsyncClient(
        base_url=kube_gateway,
        headers={"Authorization": f"Bearer {onboarded.json()['token']}"},
        timeout=60,
    )
    try:
        put = await acme.put(f"/v1/namespaces/{ns}/functions/fn", json={"timeout_s": 10})
        assert put.status_code == 201, put.text
        serve_function(kube_api, ns, "fn", pod)
        secret = await acme.put(f"/v1/namespaces/{ns}/secrets/broker", json={"value": rabbitmq.url})
        assert secret.status_code == 201, secret.text
        await asyncio.to_thread(rabbitmq.declare, queue)
        # the gateway in Kubernetes mode takes a rabbitmq trigger (it used to refuse it)...
        body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
        created = await acme.put(f"/v1/namespaces/{ns}/triggers/consume", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["queue"] == queue
        # ...and still refuses what is wrong with one
        missing = await acme.put(
            f"/v1/namespaces/{ns}/triggers/bad", json={**body, "url_secret": "missing"}
        )
        assert missing.status_code == 422
        assert "secret 'missing' not found" in missing.json()["error"]["message"]
        # ...but consumes nothing itself: the sless events process does
        assert process.db is not None
        assert process.backend is not None
        assert process.recorder is not None
        gateway_events = Events(process.settings, process.db, process.backend, process.recorder)
        assert gateway_events.consumers is None

        await consuming(process, ns, "consume")
        await asyncio.to_thread(rabbitmq.publish, queue, [("m-1", b'{"n": 1}')])
        await await_for("the call", lambda: pod.ids() == ["m-1"])
        call = pod.calls[0]
        assert call["body"] == b'{"n": 1}'
        assert call["headers"]["sless-trigger"] == "consume"
        assert call["headers"]["sless-attempt"] == "1"
        assert call["headers"]["content-type"] == "application/json"

        async def count(name: str) -> int:
            return await asyncio.to_thread(rabbitmq.count, name)

        deadline = time.monotonic() + 15
        while await count(queue) != 0:  # acknowledged
            assert time.monotonic() < deadline, "the message was not acknowledged"
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.5)
        assert pod.ids() == ["m-1"]  # exactly once
        consumer = process.consumers.consumer(ns, "consume")  # type: ignore[union-attr]
        assert consumer is not None
        assert consumer.settled == 1

        rows: list[dict[str, Any]] = []

        async def recorded() -> bool:
            answer = await acme.get(f"/v1/namespaces/{ns}/invocations", params={"function": "fn"})
            rows[:] = answer.json()["invocations"]
            return bool(rows)

        deadline = time.monotonic() + 15
        while not await recorded():
            assert time.monotonic() < deadline, "no invocation record"
            await asyncio.sleep(0.2)
        assert [(r["trigger"], r["status"]) for r in rows] == [("consume", 200)]
        assert rows[0]["id"] == call["headers"]["x-sless-invocation-id"]
        assert await count(f"{queue}.dead") == 0
        assert_no_secret(caplog, rabbitmq)
    finally:
        await acme.aclose()
        await admin.aclose()
        client.CoreV1Api(kube_api).delete_namespace(ns)


async def test_a_failing_function_is_retried_then_dead_lettered(
    process: EventsProcess,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    rabbitmq: Broker,
    queue: str,
    pod: FakePod,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    ns = tenant_namespace
    assert process.db is not None
    await put_secret(process.db, ns, "broker", rabbitmq.url)
    wrong = rabbitmq.url.replace(rabbitmq.password, rabbitmq.password + "-wrong")
    await put_secret(process.db, ns, "wrong", wrong)
    serve_function(kube_api, ns, "fn", pod)
    pod.status = 500
    await asyncio.to_thread(rabbitmq.declare, queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    put_trigger(kube_api, ns, "consume", {**body, "max_attempts": 3})
    # a trigger whose broker refuses the password: retried, and logged without the URL
    put_trigger(kube_api, ns, "refused", {**body, "url_secret": "wrong", "queue": f"{queue}.x"})
    await consuming(process, ns, "consume")

    await asyncio.to_thread(rabbitmq.publish, queue, [("bad-1", b'{"n": 1}')])
    await await_for("three attempts", lambda: len(pod.calls) >= 3, timeout=30)

    async def dead() -> int:
        return await asyncio.to_thread(rabbitmq.count, f"{queue}.dead")

    deadline = time.monotonic() + 30
    while await dead() != 1:
        assert time.monotonic() < deadline, "the message was not dead-lettered"
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.5)
    assert [c["headers"]["sless-attempt"] for c in pod.calls] == ["1", "2", "3"]
    assert pod.ids() == ["bad-1"] * 3
    assert await asyncio.to_thread(rabbitmq.count, queue) == 0
    message = await asyncio.to_thread(rabbitmq.get, f"{queue}.dead")
    assert message is not None
    assert message.message_id == "bad-1"
    assert message.headers["x-sless-attempts"] == 3
    assert message.headers["x-sless-status"] == 500
    assert message.body == b'{"n": 1}'

    rows: list[dict[str, Any]] = []

    async def three_records() -> bool:
        rows[:] = await records(process.db, ns, "fn")  # type: ignore[arg-type]
        return len(rows) >= 3

    deadline = time.monotonic() + 15
    while not await three_records():
        assert time.monotonic() < deadline, f"invocation records: {rows}"
        await asyncio.sleep(0.2)
    assert [(r["trigger"], r["status"]) for r in rows] == [("consume", 500)] * 3

    await await_for(
        "the refused connection to be logged", lambda: "broker connection failed" in caplog.text
    )
    await asyncio.to_thread(rabbitmq.delete_queues, f"{queue}.x")
    assert_no_secret(caplog, rabbitmq)


async def test_disabling_or_deleting_the_trigger_resource_stops_consuming(
    process: EventsProcess,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    rabbitmq: Broker,
    queue: str,
    pod: FakePod,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    ns = tenant_namespace
    assert process.db is not None
    assert process.consumers is not None
    consumers = process.consumers
    await put_secret(process.db, ns, "broker", rabbitmq.url)
    serve_function(kube_api, ns, "fn", pod)
    await asyncio.to_thread(rabbitmq.declare, queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}

    async def count() -> int:
        return await asyncio.to_thread(rabbitmq.count, queue)

    async def publish(message_id: str) -> None:
        await asyncio.to_thread(rabbitmq.publish, queue, [(message_id, b"{}")])

    put_trigger(kube_api, ns, "consume", body)
    await consuming(process, ns, "consume")
    await publish("first")
    await await_for("the first message", lambda: pod.ids() == ["first"])

    # the operator writing the status changes no spec: the consumer is not restarted
    before = consumers.consumer(ns, "consume")
    client.CustomObjectsApi(kube_api).patch_namespaced_custom_object_status(
        GROUP, VERSION, ns, "triggers", "consume", {"status": {"phase": "Active"}}
    )
    await asyncio.sleep(1.5)  # three passes of the consumers' manager
    assert consumers.consumer(ns, "consume") is before

    put_trigger(kube_api, ns, "consume", {**body, "enabled": False})
    await await_for("the consumer stopped", lambda: consumers.consumer(ns, "consume") is None)
    await publish("while-disabled")
    await asyncio.sleep(2)
    assert await count() == 1
    assert pod.ids() == ["first"]

    put_trigger(kube_api, ns, "consume", body)  # enabled again: the waiting message is taken
    await await_for("the waiting message", lambda: pod.ids() == ["first", "while-disabled"])

    delete_trigger(kube_api, ns, "consume")
    await await_for("the consumer gone", lambda: consumers.consumer(ns, "consume") is None)
    await publish("after-delete")
    await asyncio.sleep(2)
    assert await count() == 1
    assert pod.ids() == ["first", "while-disabled"]
    rows = await records(process.db, ns, "fn")
    assert [(r["trigger"], r["status"]) for r in rows] == [("consume", 200)] * 2
    assert_no_secret(caplog, rabbitmq)


def test_the_sless_events_process_consumes_and_exits_0_on_sigterm(
    settings: Settings,
    database_url: str,
    kube_testenv: KubeTestenv,
    function_crd: str,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    rabbitmq: Broker,
    queue: str,
    pod: FakePod,
    tmp_path: Path,
    events_account: str,
) -> None:
    """Run as it is deployed: the real CLI, authenticated as the sless-events service
    account (so deploy/rbac/events.yaml is proven to be enough)."""
    ns = tenant_namespace
    kubeconfig = events_kubeconfig(kube_api, kube_testenv, tmp_path / "kubeconfig")

    async def prepare() -> None:
        # the gateway would have migrated the database; the process does it too
        from sless.store import create_pool, migrate

        db = await create_pool(database_url, min_size=1, max_size=2)
        try:
            await migrate(db)
            await put_secret(db, ns, "broker", rabbitmq.url)
        finally:
            await db.close()

    asyncio.run(prepare())
    serve_function(kube_api, ns, "fn", pod)
    rabbitmq.declare(queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    put_trigger(kube_api, ns, "consume", body)

    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "SLESS_BACKEND": "kubernetes",
        "SLESS_DATABASE_URL": database_url,
        "SLESS_KUBERNETES_KUBECONFIG": str(kubeconfig),
        "SLESS_EVENTS_SCHEDULER_INTERVAL_S": "0.5",
        "SLESS_SECRETS_KEYS": TEST_SECRETS_KEYS,
        "SLESS_EVENTS_BROKERS_ALLOWED": json.dumps([TEST_BROKER]),
    }
    sless = Path(sys.executable).parent / "sless"
    log_path = tmp_path / "events.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [str(sless), "events"],
            env=env,
            cwd=tmp_path,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:

            def output() -> str:
                return log_path.read_text(errors="replace")

            def wait(what: str, check: Any, timeout: float = 60) -> None:
                deadline = time.monotonic() + timeout
                while not check():
                    if proc.poll() is not None:
                        raise AssertionError(f"sless events exited {proc.returncode}:\n{output()}")
                    if time.monotonic() > deadline:
                        raise AssertionError(f"timed out waiting for {what}:\n{output()}")
                    time.sleep(0.1)

            wait("the consumer", lambda: f"trigger {ns}/consume: consuming" in output())
            rabbitmq.publish(queue, [("via-cli", b'{"cli": true}')])
            wait("the call", lambda: pod.ids() == ["via-cli"])
            wait("the acknowledgement", lambda: rabbitmq.count(queue) == 0)
            # SIGTERM while a call is under way: it finishes and is acknowledged first
            pod.delay = 1.5
            rabbitmq.publish(queue, [("in-flight", b"{}")])
            wait("the second call", lambda: pod.ids() == ["via-cli", "in-flight"])
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0, output()
            assert pod.answered == 2
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = output()
    assert "sless events: stopped" in text
    assert rabbitmq.password not in text
    assert pod.ids() == ["via-cli", "in-flight"]
    assert pod.calls[0]["headers"]["sless-trigger"] == "consume"
    assert rabbitmq.count(queue) == 0  # the in-flight message was acknowledged
    # the records still queued at SIGTERM were written before the exit
    rows = asyncio.run(records(database_url, ns, "fn"))
    assert [(r["trigger"], r["status"]) for r in rows] == [("consume", 200)] * 2


async def test_a_call_still_running_after_the_grace_period_goes_back_to_the_broker(
    process: EventsProcess,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    rabbitmq: Broker,
    queue: str,
    pod: FakePod,
) -> None:
    ns = tenant_namespace
    assert process.db is not None
    assert process.consumers is not None
    process.consumers.grace = 0.5
    await put_secret(process.db, ns, "broker", rabbitmq.url)
    serve_function(kube_api, ns, "fn", pod)
    await asyncio.to_thread(rabbitmq.declare, queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    put_trigger(kube_api, ns, "consume", body)
    await consuming(process, ns, "consume")
    pod.delay = 4.0
    await asyncio.to_thread(rabbitmq.publish, queue, [("slow", b"{}")])
    await await_for("the call under way", lambda: pod.ids() == ["slow"])
    await process.stop()  # what SIGTERM does; the call outlives the grace period
    assert pod.answered == 0
    # unacknowledged: the broker has it again, for the next consumer
    assert await asyncio.to_thread(rabbitmq.count, queue) == 1
    message = await asyncio.to_thread(rabbitmq.get, queue)
    assert message is not None
    assert message.message_id == "slow"
    assert message.redelivered

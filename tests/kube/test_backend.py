"""The Kubernetes backend against the real control plane: Function resources, the watched
index the invoke path reads, EndpointSlices and the per-endpoint connection pools."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
import yaml
from aiohttp import web
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from sless.backends.kubernetes import KubernetesBackend
from sless.backends.kubernetes.watching import Watcher
from sless.config import Settings
from sless.errors import BackendUnavailable, Conflict, NotFound, NotReady
from sless.models import AuthMode, CodeRef, FunctionSpec, JobSpec, Phase, TriggerSpec
from tests.kube.test_backend_helpers import (
    GROUP,
    ROOT,
    VERSION,
    backend,
    endpoint_slice,
    function_crd,
    kube_api,
    kube_settings,
    pod_host,
    tenant_namespace,
)
from tests.support import await_for

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

__all__ = ["backend", "function_crd", "kube_api", "tenant_namespace"]  # fixtures used here

pytestmark = pytest.mark.kube

SPEC = FunctionSpec.model_validate(
    {
        "runtime": "python3.11",
        "entrypoint": "app.main",
        "env": {"GREETING": "hello", "EMPTY": ""},
        "memory_mb": 256,
        "cpu_millis": 750,
        "timeout_s": 12.5,
        "concurrency": 3,
        "min_instances": 1,
        "egress": ["api.example.com:443", "10.0.0.0/8:5432"],
        "auth": "token",
    }
)
CODE = CodeRef(sha256="a" * 64, blob_key="code/" + "a" * 64, size=1234)
REPORT = {"verdict": "allow", "findings": [], "stages": [{"name": "archive", "status": "ok"}]}


def custom(kube_api: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(kube_api)


def read_cr(kube_api: client.ApiClient, namespace: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = custom(kube_api).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "functions", name
    )
    return body


def patch_status(
    kube_api: client.ApiClient, namespace: str, name: str, status: dict[str, Any]
) -> None:
    """What the operator does: merge into the Function's status."""
    custom(kube_api).patch_namespaced_custom_object_status(
        GROUP, VERSION, namespace, "functions", name, {"status": status}
    )


# -- desired state -------------------------------------------------------------------------


async def test_put_and_get_round_trip_the_spec_exactly(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    created = await backend.put_function(tenant_namespace, "hello", SPEC)
    assert created.spec == SPEC
    assert created.name == "hello"
    assert created.namespace == tenant_namespace
    assert created.status.phase is Phase.PENDING
    assert created.status.created_at is not None

    fetched = await backend.get_function(tenant_namespace, "hello")
    assert fetched.spec == SPEC
    assert fetched.spec.model_dump(mode="json") == SPEC.model_dump(mode="json")
    # the contract with the operator: the resource's spec is the model's JSON, and the
    # specs of the other versions a traffic split names (none here)
    raw = read_cr(kube_api, tenant_namespace, "hello")
    assert raw["spec"].pop("revisions") == {}
    assert FunctionSpec.model_validate(raw["spec"]) == SPEC
    assert raw["kind"] == "Function"

    changed = SPEC.model_copy(update={"env": {"OTHER": "1"}, "memory_mb": 512, "egress": []})
    replaced = await backend.put_function(tenant_namespace, "hello", changed)
    assert replaced.spec == changed
    assert (await backend.get_function(tenant_namespace, "hello")).spec == changed
    # a replaced map loses the keys it no longer has (no merge)
    assert read_cr(kube_api, tenant_namespace, "hello")["spec"]["env"] == {"OTHER": "1"}


async def test_list_is_per_namespace_and_sorted(
    backend: KubernetesBackend, tenant_namespace: str
) -> None:
    assert await backend.list_functions(tenant_namespace) == []
    for name in ("zeta", "alpha", "mid"):
        await backend.put_function(tenant_namespace, name, FunctionSpec())
    names = [f.name for f in await backend.list_functions(tenant_namespace)]
    assert names == ["alpha", "mid", "zeta"]
    assert await backend.list_functions("sless-nobody-here") == []


async def test_missing_functions_are_not_found(
    backend: KubernetesBackend, tenant_namespace: str
) -> None:
    with pytest.raises(NotFound):
        await backend.get_function(tenant_namespace, "nope")
    with pytest.raises(NotFound):
        await backend.delete_function(tenant_namespace, "nope")
    with pytest.raises(NotFound):
        await backend.set_code(tenant_namespace, "nope", CODE, held=False, validation=REPORT)
    with pytest.raises(NotFound):
        await backend.record_validation(tenant_namespace, "nope", REPORT)
    with pytest.raises(NotFound):
        await backend.logs(tenant_namespace, "nope", tail_bytes=1000)
    with pytest.raises(NotFound):
        backend.serving(tenant_namespace, "nope")
    # a name that is not a DNS label never reaches a URL
    with pytest.raises(NotFound):
        await backend.get_function(tenant_namespace, "../../secrets")


async def test_set_code_writes_spec_and_status_and_put_keeps_the_code(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    await backend.put_function(tenant_namespace, "fn", SPEC)
    updated = await backend.set_code(tenant_namespace, "fn", CODE, held=False, validation=REPORT)
    assert updated.spec.code == CODE
    assert updated.status.phase is Phase.PENDING
    assert updated.status.validation == REPORT
    raw = read_cr(kube_api, tenant_namespace, "fn")
    assert raw["spec"]["code"] == {
        "sha256": CODE.sha256,
        "blob_key": CODE.blob_key,
        "size": 1234,
        "version": None,
    }
    assert raw["status"]["phase"] == "Pending"
    assert raw["status"]["validation"] == REPORT

    # a spec update without code keeps the uploaded code
    kept = await backend.put_function(tenant_namespace, "fn", SPEC.model_copy(update={"env": {}}))
    assert kept.spec.code == CODE

    # held for review: Validating, with a message; the new report replaces the old whole
    other = CodeRef(sha256="b" * 64, blob_key="code/" + "b" * 64, size=9)
    review = {"verdict": "review", "findings": [{"rule": "llm", "message": "odd"}]}
    held = await backend.set_code(tenant_namespace, "fn", other, held=True, validation=review)
    assert held.status.phase is Phase.VALIDATING
    assert held.status.message == "held for provider review"
    assert held.spec.code == other
    assert read_cr(kube_api, tenant_namespace, "fn")["status"]["validation"] == review


async def test_record_validation_leaves_phase_and_serving_spec_alone(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    await backend.put_function(tenant_namespace, "fn", SPEC)
    # exclude_none: the test writes it with a merge patch, where null means "remove"
    serving = SPEC.model_copy(update={"code": CODE}).model_dump(mode="json", exclude_none=True)
    patch_status(
        kube_api,
        tenant_namespace,
        "fn",
        {"phase": "Ready", "servingSpec": serving, "observed_sha256": CODE.sha256},
    )
    rejected = {"verdict": "reject", "findings": [{"rule": "archive.symlink"}]}
    await backend.record_validation(tenant_namespace, "fn", rejected)
    status = read_cr(kube_api, tenant_namespace, "fn")["status"]
    assert status["phase"] == "Ready"
    assert status["servingSpec"] == serving
    assert status["validation"] == rejected
    function = await backend.get_function(tenant_namespace, "fn")
    assert function.status.observed_sha256 == CODE.sha256


async def test_concurrent_writers_all_land_or_get_conflict(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    """Twelve replicas racing on one function: each write either lands (after re-reading
    on a stale resourceVersion) or ends in Conflict; nothing is lost half-way."""
    await backend.put_function(tenant_namespace, "race", SPEC)
    await backend.set_code(tenant_namespace, "race", CODE, held=False, validation=REPORT)
    specs = [SPEC.model_copy(update={"memory_mb": 128 + i}) for i in range(12)]
    results = await asyncio.gather(
        *(backend.put_function(tenant_namespace, "race", s) for s in specs),
        return_exceptions=True,
    )
    landed = [r for r in results if not isinstance(r, BaseException)]
    failed = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(e, Conflict) for e in failed), failed
    assert landed, "no write landed"
    final = await backend.get_function(tenant_namespace, "race")
    assert final.spec.memory_mb in {s.memory_mb for s in specs}
    assert final.spec.code == CODE  # every writer kept the uploaded code


async def test_delete_and_a_function_being_finalized(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    await backend.put_function(tenant_namespace, "gone", FunctionSpec())
    await backend.delete_function(tenant_namespace, "gone")
    with pytest.raises(NotFound):
        await backend.get_function(tenant_namespace, "gone")

    # the operator's finalizer keeps the resource while it cleans up: gone for the API
    await backend.put_function(tenant_namespace, "held", FunctionSpec())
    custom(kube_api).patch_namespaced_custom_object(
        GROUP,
        VERSION,
        tenant_namespace,
        "functions",
        "held",
        {"metadata": {"finalizers": ["sless.kube5s.ru/cleanup"]}},
    )
    await backend.delete_function(tenant_namespace, "held")
    assert read_cr(kube_api, tenant_namespace, "held")["metadata"]["deletionTimestamp"]
    with pytest.raises(NotFound):
        await backend.get_function(tenant_namespace, "held")
    assert await backend.list_functions(tenant_namespace) == []
    with pytest.raises(NotFound):
        backend.serving(tenant_namespace, "held")
    with pytest.raises(Conflict, match="being deleted"):
        await backend.put_function(tenant_namespace, "held", FunctionSpec())


async def test_delete_namespace_deletes_every_function(
    backend: KubernetesBackend, tenant_namespace: str
) -> None:
    for name in ("a", "b"):
        await backend.put_function(tenant_namespace, name, FunctionSpec())
    await backend.delete_namespace(tenant_namespace)
    assert await backend.list_functions(tenant_namespace) == []
    await backend.delete_namespace("sless-never-existed")


async def test_put_into_a_namespace_that_does_not_exist_is_unavailable(
    backend: KubernetesBackend,
) -> None:
    with pytest.raises(BackendUnavailable, match="does not exist"):
        await backend.put_function("sless-not-onboarded", "fn", FunctionSpec())


async def test_logs_say_clearly_when_nothing_runs(
    backend: KubernetesBackend, tenant_namespace: str
) -> None:
    await backend.put_function(tenant_namespace, "quiet", FunctionSpec())
    text = await backend.logs(tenant_namespace, "quiet", tail_bytes=4096)
    assert "no running instances" in text


async def test_unreachable_api_server_is_backend_unavailable(
    settings: Settings, kube_testenv: KubeTestenv, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    text = kube_testenv.kubeconfig.read_text()
    kubeconfig.write_text(text.replace(kube_testenv.server, "https://127.0.0.1:9"))
    settings = kube_settings(settings, kube_testenv)
    settings.kubernetes.kubeconfig = kubeconfig
    unreachable = KubernetesBackend(settings, sync_timeout_s=1.0)
    with pytest.raises(BackendUnavailable, match="could not list") as info:
        await unreachable.start()
    assert kube_testenv.token not in str(info.value)
    await unreachable.api.open()
    try:
        with pytest.raises(BackendUnavailable, match="unreachable"):
            await unreachable.get_function("sless-x", "fn")
    finally:
        await unreachable.api.close()


# -- the watched index ---------------------------------------------------------------------


async def test_index_follows_changes_made_directly_through_the_api(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Function",
        "metadata": {"name": "direct"},
        "spec": SPEC.model_dump(mode="json"),
    }
    await asyncio.to_thread(
        custom(kube_api).create_namespaced_custom_object,
        GROUP,
        VERSION,
        tenant_namespace,
        "functions",
        body,
    )

    def phase_error() -> str | None:
        try:
            backend.serving(tenant_namespace, "direct")
        except NotReady as e:
            return e.message
        except NotFound:
            return None
        return "serving"

    message = await await_for("the new function in the index", phase_error, timeout=10)
    assert "Pending" in message

    serving = SPEC.model_copy(update={"code": CODE})
    patch_status(
        kube_api,
        tenant_namespace,
        "direct",
        {"phase": "Ready", "servingSpec": serving.model_dump(mode="json")},
    )
    spec = await await_for(
        "the serving spec",
        lambda: phase_error() == "serving" and backend.serving(tenant_namespace, "direct"),
        timeout=10,
    )
    assert spec == serving
    assert spec.auth is AuthMode.TOKEN

    # a new version builds: the previous one keeps serving
    patch_status(kube_api, tenant_namespace, "direct", {"phase": "Building"})
    newer = serving.model_copy(update={"auth": AuthMode.PUBLIC, "timeout_s": 3.0})
    patch_status(
        kube_api,
        tenant_namespace,
        "direct",
        {"phase": "Ready", "servingSpec": newer.model_dump(mode="json")},
    )
    await await_for(
        "the newer serving spec",
        lambda: backend.serving(tenant_namespace, "direct") == newer,
        timeout=10,
    )

    await asyncio.to_thread(
        custom(kube_api).delete_namespaced_custom_object,
        GROUP,
        VERSION,
        tenant_namespace,
        "functions",
        "direct",
    )
    await await_for("the deletion", lambda: phase_error() is None, timeout=10)


# -- endpoints and pooled upstreams ---------------------------------------------------------


async def _start_server(label: str) -> tuple[web.AppRunner, int]:
    async def handle(request: web.Request) -> web.Response:
        return web.json_response({"server": label, "path": request.path})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    sock = pod_host().listen()
    await web.SockSite(runner, sock).start()
    port: int = sock.getsockname()[1]
    return runner, port


@pytest.fixture
async def two_servers() -> AsyncIterator[tuple[str, list[int]]]:
    started = [await _start_server(label) for label in ("one", "two")]
    yield pod_host().address, [port for _, port in started]
    for runner, _ in started:
        await runner.cleanup()


async def _make_ready(kube_api: client.ApiClient, namespace: str, name: str) -> None:
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Function",
        "metadata": {"name": name},
        "spec": SPEC.model_dump(mode="json"),
    }
    await asyncio.to_thread(
        custom(kube_api).create_namespaced_custom_object,
        GROUP,
        VERSION,
        namespace,
        "functions",
        body,
    )
    # exclude_none: the test writes it with a merge patch, where null means "remove"
    serving = SPEC.model_copy(update={"code": CODE}).model_dump(mode="json", exclude_none=True)
    patch_status(kube_api, namespace, name, {"phase": "Ready", "servingSpec": serving})


async def _call(backend: KubernetesBackend, namespace: str, name: str) -> str:
    async with backend.upstream(namespace, name) as upstream:
        response = await upstream.client.request("GET", "/x", [], b"", max_response_bytes=4096)
        data: dict[str, str] = json.loads(response.body)
        return data["server"]


async def test_endpoint_slices_steer_invocations(
    backend: KubernetesBackend,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    two_servers: tuple[str, list[int]],
) -> None:
    address, (port_one, port_two) = two_servers
    if port_one == port_two:
        pytest.skip("two servers got the same port")
    discovery = client.DiscoveryV1Api(kube_api)
    await _make_ready(kube_api, tenant_namespace, "web")
    await await_for("ready", lambda: _serves(backend, tenant_namespace, "web"), timeout=10)
    with pytest.raises(NotReady, match="no ready instances"):
        async with backend.upstream(tenant_namespace, "web"):
            pass

    # two slices of one Service, one of them also listing an endpoint that is not ready
    await asyncio.to_thread(
        discovery.create_namespaced_endpoint_slice,
        tenant_namespace,
        endpoint_slice("fn-web-a", "fn-web", [(address, True), ("10.9.9.9", False)], port_one),
    )
    await asyncio.to_thread(
        discovery.create_namespaced_endpoint_slice,
        tenant_namespace,
        endpoint_slice("fn-web-b", "fn-web", [(address, True)], port_two),
    )
    both = {f"http://{address}:{port_one}", f"http://{address}:{port_two}"}
    await await_for(
        "both endpoints", lambda: backend.endpoints(tenant_namespace, "web") == both, timeout=10
    )

    # sequential calls alternate; concurrent ones spread by in-flight count
    seen = Counter([await _call(backend, tenant_namespace, "web") for _ in range(6)])
    assert seen == Counter({"one": 3, "two": 3})
    seen = Counter(
        await asyncio.gather(*(_call(backend, tenant_namespace, "web") for _ in range(20)))
    )
    assert set(seen) == {"one", "two"}

    # an endpoint that failed is skipped for a while
    async with backend.upstream(tenant_namespace, "web") as upstream:
        failed_url = upstream.client.host
        upstream.failed = True
    failed_label = "one" if failed_url.endswith(f":{port_one}") else "two"
    seen = Counter([await _call(backend, tenant_namespace, "web") for _ in range(4)])
    assert failed_label not in seen

    # a slice going away takes its endpoint with it
    await asyncio.to_thread(
        discovery.delete_namespaced_endpoint_slice, "fn-web-b", tenant_namespace
    )
    only = {f"http://{address}:{port_one}"}
    await await_for(
        "one endpoint left", lambda: backend.endpoints(tenant_namespace, "web") == only, timeout=10
    )
    assert {await _call(backend, tenant_namespace, "web") for _ in range(3)} == {"one"}

    # the endpoint turning unready empties the pool
    await asyncio.to_thread(
        discovery.replace_namespaced_endpoint_slice,
        "fn-web-a",
        tenant_namespace,
        endpoint_slice("fn-web-a", "fn-web", [(address, False)], port_one),
    )
    await await_for(
        "no endpoints", lambda: not backend.endpoints(tenant_namespace, "web"), timeout=10
    )
    with pytest.raises(NotReady):
        async with backend.upstream(tenant_namespace, "web"):
            pass


async def test_slices_outside_tenant_namespaces_are_ignored(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    core = client.CoreV1Api(kube_api)
    other = "plain-" + tenant_namespace
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=other)))
    try:
        discovery = client.DiscoveryV1Api(kube_api)
        discovery.create_namespaced_endpoint_slice(
            other, endpoint_slice("fn-x-a", "fn-x", [("10.1.2.3", True)], 8080)
        )
        # a Service in a tenant namespace that is not a function's
        discovery.create_namespaced_endpoint_slice(
            tenant_namespace, endpoint_slice("db-a", "db", [("10.1.2.4", True)], 5432)
        )
        marker = endpoint_slice("fn-m-a", "fn-m", [("10.1.2.5", True)], 8080)
        await _make_ready(kube_api, tenant_namespace, "m")
        discovery.create_namespaced_endpoint_slice(tenant_namespace, marker)
        await await_for(
            "the marker endpoint", lambda: backend.endpoints(tenant_namespace, "m"), timeout=10
        )
        assert backend.endpoints(other, "x") == frozenset()
        assert backend.endpoints(tenant_namespace, "db") == frozenset()
        assert backend._slices.get(other, "fn-x") == frozenset()
    finally:
        core.delete_namespace(other)


def _serves(backend: KubernetesBackend, namespace: str, name: str) -> bool:
    try:
        backend.serving(namespace, name)
    except (NotFound, NotReady):
        return False
    return True


# -- watch recovery --------------------------------------------------------------------------


async def test_a_watch_from_an_expired_resource_version_lists_again(
    backend: KubernetesBackend, tenant_namespace: str
) -> None:
    """HTTP 410 (or an ERROR event with code 410): the watcher re-lists and carries on."""
    await backend.put_function(tenant_namespace, "seen", FunctionSpec())
    resets: list[list[str]] = []
    events: list[str] = []
    watcher = Watcher(
        backend.api,
        f"/apis/{GROUP}/{VERSION}/namespaces/{tenant_namespace}/functions",
        on_reset=lambda items: resets.append([i["metadata"]["name"] for i in items]),
        on_event=lambda kind, item: events.append(f"{kind} {item['metadata']['name']}"),
    )
    watcher.resource_version = "1"  # long compacted away
    task = asyncio.create_task(watcher.run())
    try:
        await await_for("a fresh list", lambda: resets, timeout=10)
        assert resets == [["seen"]]
        await backend.put_function(tenant_namespace, "later", FunctionSpec())
        await await_for("the watch to resume", lambda: "ADDED later" in events, timeout=10)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class _Proxy:
    """A TCP forwarder in front of the API server that can cut every connection."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.open = True
        self.writers: set[asyncio.StreamWriter] = set()
        self.server: asyncio.AbstractServer | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.open:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        self.open = False
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def test_the_index_catches_up_after_the_api_server_was_unreachable(
    settings: Settings,
    kube_testenv: KubeTestenv,
    kube_api: client.ApiClient,
    function_crd: str,
    tenant_namespace: str,
    tmp_path: Path,
) -> None:
    server = urlsplit(kube_testenv.server)
    assert server.hostname
    assert server.port
    proxy = _Proxy(server.hostname, server.port)
    port = await proxy.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        kube_testenv.kubeconfig.read_text().replace(
            kube_testenv.server, f"https://{server.hostname}:{port}"
        )
    )
    settings = kube_settings(settings, kube_testenv)
    settings.kubernetes.kubeconfig = kubeconfig
    behind_proxy = KubernetesBackend(settings)
    await behind_proxy.start()
    try:
        await _make_ready(kube_api, tenant_namespace, "steady")
        await await_for(
            "the function", lambda: _serves(behind_proxy, tenant_namespace, "steady"), timeout=10
        )

        proxy.cut()  # the watches break; reconnects are refused for now
        with pytest.raises(BackendUnavailable):
            await behind_proxy.get_function(tenant_namespace, "steady")
        # what the index already knew still serves: the invoke path does not need the API
        assert behind_proxy.serving(tenant_namespace, "steady").code == CODE
        # meanwhile the cluster changes
        await _make_ready(kube_api, tenant_namespace, "newer")
        await asyncio.to_thread(
            custom(kube_api).delete_namespaced_custom_object,
            GROUP,
            VERSION,
            tenant_namespace,
            "functions",
            "steady",
        )
        await asyncio.sleep(1.5)
        assert _serves(behind_proxy, tenant_namespace, "steady")  # still the old view

        proxy.open = True
        await await_for(
            "the index to catch up",
            lambda: (
                _serves(behind_proxy, tenant_namespace, "newer")
                and not _serves(behind_proxy, tenant_namespace, "steady")
            ),
            timeout=30,
        )
    finally:
        await behind_proxy.stop()
        await proxy.close()


# -- the gateway's RBAC ------------------------------------------------------------------------


def _apply_ignoring_conflicts(kube_api: client.ApiClient, documents: list[dict[str, Any]]) -> None:
    core = client.CoreV1Api(kube_api)
    rbac = client.RbacAuthorizationV1Api(kube_api)
    creators = {
        "ServiceAccount": lambda d: core.create_namespaced_service_account(
            d["metadata"]["namespace"], d
        ),
        "ClusterRole": rbac.create_cluster_role,
        "ClusterRoleBinding": rbac.create_cluster_role_binding,
        "Role": lambda d: rbac.create_namespaced_role(d["metadata"]["namespace"], d),
        "RoleBinding": lambda d: rbac.create_namespaced_role_binding(d["metadata"]["namespace"], d),
    }
    for document in documents:
        try:
            creators[document["kind"]](document)
        except ApiException as e:
            if e.status != 409:
                raise


async def test_the_backend_works_with_the_gateways_rbac_only(
    settings: Settings,
    kube_testenv: KubeTestenv,
    kube_api: client.ApiClient,
    function_crd: str,
    tenant_namespace: str,
    tmp_path: Path,
) -> None:
    """Under deploy/rbac/gateway.yaml's ClusterRole (a service account token, not admin)."""
    manifest = ROOT / "deploy" / "rbac" / "gateway.yaml"
    if not manifest.exists():
        pytest.skip("deploy/rbac/gateway.yaml does not exist yet")
    documents = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    account = next(d for d in documents if d["kind"] == "ServiceAccount")["metadata"]
    core = client.CoreV1Api(kube_api)
    try:
        core.create_namespace(
            client.V1Namespace(metadata=client.V1ObjectMeta(name=account["namespace"]))
        )
    except ApiException as e:
        if e.status != 409:
            raise
    _apply_ignoring_conflicts(kube_api, documents)
    token = core.create_namespaced_service_account_token(
        account["name"],
        account["namespace"],
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
        ),
    ).status.token
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kube_testenv.kubeconfig.read_text().replace(kube_testenv.token, token))
    settings = kube_settings(settings, kube_testenv)
    settings.kubernetes.kubeconfig = kubeconfig
    limited = KubernetesBackend(settings)
    await limited.start()  # list + watch Functions and EndpointSlices cluster-wide
    try:
        await limited.put_function(tenant_namespace, "fn", SPEC)
        await limited.put_function(tenant_namespace, "fn", SPEC)
        await limited.set_code(tenant_namespace, "fn", CODE, held=True, validation=REPORT)
        await limited.record_validation(tenant_namespace, "fn", REPORT)
        assert [f.name for f in await limited.list_functions(tenant_namespace)] == ["fn"]
        logs = await limited.logs(tenant_namespace, "fn", tail_bytes=1000)
        assert "logs are not available" in logs or "no running instances" in logs
        await limited.put_function(tenant_namespace, "other", SPEC)
        await limited.delete_function(tenant_namespace, "other")
        await limited.delete_namespace(tenant_namespace)
        assert await limited.list_functions(tenant_namespace) == []
    finally:
        await limited.stop()


# -- triggers and jobs ------------------------------------------------------------------------


def _require_crd(kube_api: client.ApiClient, name: str) -> None:
    try:
        client.ApiextensionsV1Api(kube_api).read_custom_resource_definition(name)
    except ApiException as e:
        if e.status == 404:
            pytest.skip(f"the {name} CRD is not in deploy/crds/ yet")
        raise


async def test_triggers_round_trip_as_custom_resources(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    _require_crd(kube_api, f"triggers.{GROUP}")
    spec = TriggerSpec.model_validate(
        {"type": "cron", "function": "fn", "schedule": "*/5 * * * *", "enabled": False}
    )
    trigger, created = await backend.put_trigger(tenant_namespace, "every5", spec)
    assert created
    assert trigger.spec == spec
    raw = custom(kube_api).get_namespaced_custom_object(
        GROUP, VERSION, tenant_namespace, "triggers", "every5"
    )
    assert TriggerSpec.model_validate(raw["spec"]) == spec
    enabled = spec.model_copy(update={"enabled": True})
    trigger, created = await backend.put_trigger(tenant_namespace, "every5", enabled)
    assert not created
    assert (await backend.get_trigger(tenant_namespace, "every5")).spec == enabled
    assert [t.name for t in await backend.list_triggers(tenant_namespace)] == ["every5"]
    await backend.delete_trigger(tenant_namespace, "every5")
    with pytest.raises(NotFound):
        await backend.get_trigger(tenant_namespace, "every5")
    with pytest.raises(NotFound):
        await backend.delete_trigger(tenant_namespace, "every5")


async def test_job_run_ids_only_move_forward(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    _require_crd(kube_api, f"functionjobs.{GROUP}")
    job, created = await backend.put_job(
        tenant_namespace, "nightly", JobSpec(function="fn", run_id=0, payload={"a": [1, 2]})
    )
    assert created
    assert job.spec.payload == {"a": [1, 2]}
    job, created = await backend.put_job(
        tenant_namespace, "nightly", JobSpec(function="fn", run_id=3)
    )
    assert not created
    assert job.spec.run_id == 3
    # the same run id again is accepted and changes nothing that matters
    await backend.put_job(tenant_namespace, "nightly", JobSpec(function="fn", run_id=3))
    with pytest.raises(Conflict, match="only move forward"):
        await backend.put_job(tenant_namespace, "nightly", JobSpec(function="fn", run_id=2))
    assert (await backend.get_job(tenant_namespace, "nightly")).spec.run_id == 3
    assert [j.name for j in await backend.list_jobs(tenant_namespace)] == ["nightly"]
    await backend.delete_namespace(tenant_namespace)
    assert await backend.list_jobs(tenant_namespace) == []


async def test_a_review_decision_releases_or_rejects_only_the_held_code(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    await backend.put_function(tenant_namespace, "held", SPEC)
    await backend.set_code(tenant_namespace, "held", CODE, held=True, validation=REPORT)
    # a decision on other code (a newer upload replaced it) changes nothing
    await backend.decide_review(tenant_namespace, "held", "f" * 64, approve=True, reason="")
    assert (await backend.get_function(tenant_namespace, "held")).status.phase is Phase.VALIDATING
    await backend.decide_review(tenant_namespace, "held", CODE.sha256, approve=True, reason="ok")
    assert (await backend.get_function(tenant_namespace, "held")).status.phase is Phase.PENDING
    # no longer held: a second decision changes nothing
    await backend.decide_review(tenant_namespace, "held", CODE.sha256, approve=False, reason="x")
    assert (await backend.get_function(tenant_namespace, "held")).status.phase is Phase.PENDING

    await backend.set_code(tenant_namespace, "held", CODE, held=True, validation=REPORT)
    await backend.decide_review(
        tenant_namespace, "held", CODE.sha256, approve=False, reason="mines coins"
    )
    rejected = await backend.get_function(tenant_namespace, "held")
    assert rejected.status.phase is Phase.REJECTED
    assert rejected.status.message == "rejected by the provider's review: mines coins"


async def test_resource_version_is_the_custom_resources(
    backend: KubernetesBackend, kube_api: client.ApiClient, tenant_namespace: str
) -> None:
    """Kubernetes mode: the API's resource_version (the ETag) is metadata.resourceVersion,
    and it changes when anyone writes the resource, its status included."""
    created = await backend.put_function(tenant_namespace, "versioned", SPEC)
    raw = read_cr(kube_api, tenant_namespace, "versioned")
    assert created.resource_version == raw["metadata"]["resourceVersion"]
    patch_status(kube_api, tenant_namespace, "versioned", {"phase": "Building"})
    now = read_cr(kube_api, tenant_namespace, "versioned")["metadata"]["resourceVersion"]
    assert now != created.resource_version
    assert (await backend.get_function(tenant_namespace, "versioned")).resource_version == now
    listed = await backend.list_functions(tenant_namespace)
    assert [(f.name, f.resource_version) for f in listed] == [("versioned", now)]

    _require_crd(kube_api, f"triggers.{GROUP}")
    spec = TriggerSpec.model_validate({"type": "cron", "function": "fn", "schedule": "0 0 * * *"})
    trigger, _ = await backend.put_trigger(tenant_namespace, "nightly", spec)
    raw_trigger = custom(kube_api).get_namespaced_custom_object(
        GROUP, VERSION, tenant_namespace, "triggers", "nightly"
    )
    assert trigger.resource_version == raw_trigger["metadata"]["resourceVersion"]
    job, _ = await backend.put_job(tenant_namespace, "once", JobSpec(function="fn", run_id=0))
    assert job.resource_version
    assert (await backend.get_job(tenant_namespace, "once")).resource_version == (
        job.resource_version
    )

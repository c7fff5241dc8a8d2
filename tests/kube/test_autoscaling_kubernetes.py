"""Autoscaling in Kubernetes mode against the real API server: the gateway's backend counts
the calls in flight and writes its decision to the Deployment's ``scale`` subresource.

No kubelet runs, so the test plays the operator (it creates the Function, its Deployment
as ``sless.policies`` renders it, and an EndpointSlice) and the pods (a server in the test's
own network namespace that holds every call until the test lets it go: the load is set by
how many calls are held, never by how long they take). Two gateway replicas each see part
of the load; their demand Leases add up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import web
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from sless.backends.kubernetes import KubernetesBackend
from sless.backends.kubernetes.scaling import Autoscaler
from sless.config import KubernetesSettings, Settings
from sless.errors import TooManyRequests
from sless.models import CodeRef, FunctionSpec
from sless.policies import function_deployment
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
from tests.support import await_for

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

__all__ = ["function_crd", "kube_api", "tenant_namespace"]  # fixtures used here

pytestmark = pytest.mark.kube

CODE = CodeRef(sha256="b" * 64, blob_key="code/" + "b" * 64, size=10)
SPEC = FunctionSpec(concurrency=2, min_instances=1, max_instances=4, code=CODE)
IMAGE = "registry.test:5000/sless/f@sha256:" + "c" * 64


class HeldServer:
    """A "pod": answers each call when the test sets ``release``."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = 0
        self.runner: web.AppRunner | None = None

    async def start(self) -> int:
        async def handle(request: web.Request) -> web.Response:
            self.held += 1
            try:
                await self.release.wait()
            finally:
                self.held -= 1
            return web.json_response({"ok": True})

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        sock = pod_host().listen()
        await web.SockSite(self.runner, sock).start()
        port: int = sock.getsockname()[1]
        return port

    async def stop(self) -> None:
        self.release.set()
        if self.runner is not None:
            await self.runner.cleanup()


def _settings(settings: Settings, kube_testenv: KubeTestenv, identity: str) -> Settings:
    copy = kube_settings(settings.model_copy(deep=True), kube_testenv)
    copy.kubernetes.identity = identity
    copy.kubernetes.autoscale_interval_s = 0.3
    copy.kubernetes.scale_down_delay_s = 2.0
    copy.gateway.queue_timeout_s = 0.5
    return copy


@pytest.fixture
async def gateways(
    settings: Settings, kube_testenv: KubeTestenv, function_crd: str, kube_api: client.ApiClient
) -> AsyncIterator[tuple[KubernetesBackend, KubernetesBackend]]:
    with contextlib.suppress(ApiException):
        client.CoreV1Api(kube_api).create_namespace({"metadata": {"name": "sless-system"}})
    started = []
    for identity in ("gw-a", "gw-b"):
        backend = KubernetesBackend(
            _settings(settings, kube_testenv, identity), endpoint_cooldown_s=2.0, autoscale=True
        )
        await backend.start()
        started.append(backend)
    yield started[0], started[1]
    for backend in started:
        await backend.stop()


@pytest.fixture
async def held_server() -> AsyncIterator[tuple[HeldServer, int]]:
    server = HeldServer()
    port = await server.start()
    yield server, port
    await server.stop()


async def _make_function(kube_api: client.ApiClient, namespace: str, port: int) -> None:
    custom = client.CustomObjectsApi(kube_api)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Function",
        "metadata": {"name": "web"},
        "spec": SPEC.model_dump(mode="json", exclude_none=True),
    }
    await asyncio.to_thread(
        custom.create_namespaced_custom_object, GROUP, VERSION, namespace, "functions", body
    )
    status = {"phase": "Ready", "servingSpec": SPEC.model_dump(mode="json", exclude_none=True)}
    await asyncio.to_thread(
        custom.patch_namespaced_custom_object_status,
        GROUP,
        VERSION,
        namespace,
        "functions",
        "web",
        {"status": status},
    )
    # what the operator applies: replicas max(1, min_instances)
    deployment = function_deployment(
        SPEC, namespace, "web", IMAGE, CODE.sha256, KubernetesSettings()
    )
    await asyncio.to_thread(
        client.AppsV1Api(kube_api).create_namespaced_deployment, namespace, deployment
    )
    await asyncio.to_thread(
        client.DiscoveryV1Api(kube_api).create_namespaced_endpoint_slice,
        namespace,
        endpoint_slice("fn-web-a", "fn-web", [(pod_host().address, True)], port),
    )


def _scaler(backend: KubernetesBackend) -> Autoscaler:
    assert backend.autoscaler is not None
    return backend.autoscaler


def _replicas(kube_api: client.ApiClient, namespace: str) -> int:
    scale = client.AppsV1Api(kube_api).read_namespaced_deployment_scale("fn-web", namespace)
    return int(scale.spec.replicas or 0)  # 0 is left out of the answer


async def _call(backend: KubernetesBackend, namespace: str) -> int:
    async with backend.upstream(namespace, "web") as upstream:
        response = await upstream.client.request("GET", "/", [], b"", max_response_bytes=4096)
        return response.status


async def _hold(
    backend: KubernetesBackend, namespace: str, n: int, server: HeldServer, held: int
) -> list[asyncio.Task[int]]:
    """Start ``n`` calls through ``backend`` and wait until the server holds ``held``."""
    tasks = [asyncio.create_task(_call(backend, namespace)) for _ in range(n)]
    await await_for(f"{held} calls held", lambda: server.held == held, timeout=20)
    return tasks


async def test_replicas_follow_the_calls_in_flight_of_every_gateway(
    gateways: tuple[KubernetesBackend, KubernetesBackend],
    kube_api: client.ApiClient,
    tenant_namespace: str,
    held_server: tuple[HeldServer, int],
) -> None:
    a, b = gateways
    server, port = held_server
    await _make_function(kube_api, tenant_namespace, port)

    def serves() -> bool:
        return all(x.endpoints(tenant_namespace, "web") for x in (a, b))

    await await_for("both gateways see the endpoint", serves, timeout=20)
    scaler_a, scaler_b = _scaler(a), _scaler(b)
    assert _replicas(kube_api, tenant_namespace) == 1

    # 1 call in flight, concurrency 2: one replica is enough, nothing is written
    key = (tenant_namespace, "web")
    tasks = await _hold(a, tenant_namespace, 1, server, 1)
    await await_for("a tick decided", lambda: key in scaler_a.replicas)
    await await_for("both gateways' Leases", lambda: scaler_a.gateways == 2)
    assert _replicas(kube_api, tenant_namespace) == 1
    assert scaler_a.decisions == 0

    # 3 calls on a, 2 on b: 5 in flight in all, ceil(5 / 2) = 3 replicas; either gateway
    # alone would ask for 2
    tasks += await _hold(a, tenant_namespace, 2, server, 3)
    tasks += await _hold(b, tenant_namespace, 2, server, 5)
    await await_for("3 replicas", lambda: _replicas(kube_api, tenant_namespace) == 3, timeout=20)
    assert a.instance_counts()[key][2] == 3

    # 8 in flight: max_instances (4) * concurrency (2); never more than 4 replicas
    tasks += await _hold(a, tenant_namespace, 1, server, 6)
    tasks += await _hold(b, tenant_namespace, 2, server, 8)
    await await_for("4 replicas", lambda: _replicas(kube_api, tenant_namespace) == 4, timeout=20)
    # beyond the capacity a gateway admits its share (8 / 2 gateways = 4 each): a 5th call
    # on a waits queue_timeout_s, then 429 with Retry-After
    with pytest.raises(TooManyRequests) as refused:
        await _call(a, tenant_namespace)
    assert refused.value.retry_after >= 1
    assert "max_instances" in refused.value.message
    assert scaler_a.throttled == 1
    assert server.held == 8
    await asyncio.sleep(1.0)  # a few more ticks with the waiting call counted as demand
    assert _replicas(kube_api, tenant_namespace) == 4

    # the load ends; after the scale-down window (2 s) back to max(1, min_instances)
    server.release.set()
    assert await asyncio.gather(*tasks) == [200] * 8
    await await_for(
        "back to 1 replica", lambda: _replicas(kube_api, tenant_namespace) == 1, timeout=30
    )
    assert scaler_a.decisions + scaler_b.decisions >= 3


async def test_a_function_scaled_to_zero_by_the_operator_is_left_alone(
    gateways: tuple[KubernetesBackend, KubernetesBackend],
    kube_api: client.ApiClient,
    tenant_namespace: str,
    held_server: tuple[HeldServer, int],
) -> None:
    a, _ = gateways
    server, port = held_server
    await _make_function(kube_api, tenant_namespace, port)
    await await_for("endpoint", lambda: bool(a.endpoints(tenant_namespace, "web")), timeout=20)
    patch: dict[str, Any] = {"spec": {"replicas": 0}}
    await asyncio.to_thread(
        client.AppsV1Api(kube_api).patch_namespaced_deployment_scale,
        "fn-web",
        tenant_namespace,
        patch,
    )
    # 4 calls (a's share of the capacity once it sees b's Lease): demand for 2 replicas
    tasks = await _hold(a, tenant_namespace, 4, server, 4)
    # ticks pass with that demand: the 0 stays
    decisions = _scaler(a).decisions
    await await_for(
        "the autoscaler saw the Deployment at 0",
        lambda: a.instance_counts().get((tenant_namespace, "web"), (None,))[0] == 0,
        timeout=20,
    )
    await asyncio.sleep(1.0)  # a few more ticks (0.3 s each), any of which could write
    assert _replicas(kube_api, tenant_namespace) == 0
    assert _scaler(a).decisions == decisions
    server.release.set()
    await asyncio.gather(*tasks)


async def test_without_its_lease_a_gateway_still_scales_on_its_own_calls(
    settings: Settings,
    kube_testenv: KubeTestenv,
    function_crd: str,
    kube_api: client.ApiClient,
    tenant_namespace: str,
    held_server: tuple[HeldServer, int],
) -> None:
    alone = _settings(settings, kube_testenv, "gw-alone")
    alone.kubernetes.gateway_namespace = "sless-no-such-namespace"  # Lease writes fail
    backend = KubernetesBackend(alone, autoscale=True)
    await backend.start()
    try:
        server, port = held_server
        await _make_function(kube_api, tenant_namespace, port)
        await await_for("endpoint", lambda: bool(backend.endpoints(tenant_namespace, "web")))
        tasks = await _hold(backend, tenant_namespace, 5, server, 5)
        await await_for(
            "3 replicas", lambda: _replicas(kube_api, tenant_namespace) == 3, timeout=20
        )
        assert _scaler(backend).gateways == 1
        server.release.set()
        assert await asyncio.gather(*tasks) == [200] * 5
    finally:
        await backend.stop()

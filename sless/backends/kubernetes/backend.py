"""The Kubernetes-mode backend: desired state in Function custom resources, functions in pods.

Writes (``put_function``, ``set_code``, ``delete_function``...) go straight to the API
server; the kopf operator turns them into build Jobs, Deployments and Services and
reports back in the Function's status (``servingSpec`` once a version serves).

The invoke path makes no API round trip: two watches keep an in-memory index current,
one on Functions (the serving spec, its phase and auth mode) and one on EndpointSlices
(the ready addresses of each ``fn-<name>`` Service), and ``upstream()`` leases a pooled
connection to the least busy ready instance (``endpoints.py``). A function scaled to zero
is woken and its call held until a pod is ready (``activation.py``).

How the writes meet concurrent changes (409, read again, write again) is
``functions.py``'s, the mixin that writes the Function resources.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

from sless.backends.base import Upstream
from sless.backends.kubernetes.activation import Activator
from sless.backends.kubernetes.endpoints import (
    SERVICE_LABEL,
    EndingOf,
    EndpointPool,
    SliceIndex,
)
from sless.backends.kubernetes.function_secrets import FunctionSecrets
from sless.backends.kubernetes.functions import FunctionResources
from sless.backends.kubernetes.logs import pod_ending, pod_logs
from sless.backends.kubernetes.resources import (
    FUNCTION_JOBS,
    PLURAL,
    TRIGGERS,
    Serving,
    function_of_service,
    is_function_slice,
    key_of,
    service_name,
    serving_of,
)
from sless.backends.kubernetes.scaling import Autoscaler, gateway_identity
from sless.backends.kubernetes.storing import ResourceStore
from sless.backends.kubernetes.tenants import TenantResources
from sless.backends.kubernetes.triggering import TriggerResources
from sless.backends.kubernetes.triggers import TriggerIndex
from sless.backends.kubernetes.watching import Watcher
from sless.config import Settings
from sless.errors import BackendUnavailable, NotFound, NotReady
from sless.kube import KubeApi
from sless.models import FunctionSpec
from sless.models.endings import Ending
from sless.policies import labels
from sless.store import SecretRepository, VersionRepository
from sless.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Key = tuple[str, str]

_LOG_PODS = 5


class KubernetesBackend(TriggerResources, FunctionResources, TenantResources):
    #: the operator makes CronJobs and Jobs; RabbitMQ consumers run in ``sless events``
    events_in_process: ClassVar[bool] = False

    def __init__(
        self,
        settings: Settings,
        *,
        sync_timeout_s: float = 30.0,
        watch_timeout_s: float = 120.0,
        endpoint_cooldown_s: float = 5.0,
        secrets: SecretRepository | None = None,
        autoscale: bool = False,
        versions: VersionRepository | None = None,
    ) -> None:
        self.settings = settings
        #: the largest answer a call may read (Serving)
        self.max_response_bytes = settings.gateway.max_response_bytes
        kube = settings.kubernetes
        self.api = KubeApi(kube)
        #: the tenants' secrets (PostgreSQL), written into each function's own Secret
        self._function_secrets = FunctionSecrets(self.api, secrets)
        #: the functions' versions (PostgreSQL): the specs a traffic split's versions run
        self._versions = versions
        self._api_version = f"{kube.group}/{kube.version}"
        self._root = f"/apis/{kube.group}/{kube.version}"
        self._sync_timeout_s = sync_timeout_s
        self._watch_timeout_s = watch_timeout_s
        self._endpoint_cooldown_s = endpoint_cooldown_s
        self._store = ResourceStore(
            self.api, root=self._root, plural=PLURAL, kind="Function", noun="function"
        )
        self._triggers = ResourceStore(
            self.api, root=self._root, plural=TRIGGERS, kind="Trigger", noun="trigger"
        )
        self._jobs = ResourceStore(
            self.api, root=self._root, plural=FUNCTION_JOBS, kind="FunctionJob", noun="job"
        )
        self._functions: dict[Key, Serving] = {}
        self._slices = SliceIndex()
        self._pools: dict[Key, EndpointPool] = {}
        #: the pools of the other versions a traffic split names: (namespace, name, v3)
        self._version_pools: dict[tuple[str, str, str], EndpointPool] = {}
        #: (namespace, Service of a version) -> (function, version)
        self._version_services: dict[Key, tuple[str, str]] = {}
        self._watchers: list[Watcher] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._closing: set[asyncio.Task[None]] = set()
        self._trigger_index: TriggerIndex | None = None
        self._trigger_subscribers: list[Callable[[], None]] = []
        #: (namespace, function) -> some http trigger of it is enabled; absent: none exists
        self._http_open: dict[Key, bool] = {}
        #: the gateway's: replicas from the calls in flight (``scaling``); None elsewhere
        self.autoscaler = (
            Autoscaler(
                self.api,
                settings,
                identity=gateway_identity(kube.identity),
                serving=self._serving_spec,
                disabled=self.http_disabled,
            )
            if autoscale
            else None
        )
        self._activator = Activator(self.api, self._path, kube)

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        await self.api.open()
        self._watchers = [
            Watcher(
                self.api,
                f"{self._root}/{PLURAL}",
                on_reset=self._reset_functions,
                on_event=self._function_event,
                watch_timeout_s=self._watch_timeout_s,
            ),
            Watcher(
                self.api,
                "/apis/discovery.k8s.io/v1/endpointslices",
                # every slice of a Service carries this label; the tenant and function
                # filters are applied here, since a selector cannot match a name prefix
                params={"labelSelector": SERVICE_LABEL},
                on_reset=self._reset_slices,
                on_event=self._slice_event,
                watch_timeout_s=self._watch_timeout_s,
            ),
        ]
        self._tasks = [asyncio.create_task(w.run(), name=f"watch {w.path}") for w in self._watchers]
        try:
            async with asyncio.timeout(self._sync_timeout_s):
                await asyncio.gather(*(w.synced.wait() for w in self._watchers))
        except TimeoutError:
            errors = "; ".join(f"{w.path}: {w.last_error}" for w in self._watchers if w.last_error)
            await self.stop()
            raise BackendUnavailable(
                f"could not list functions and endpoints within {self._sync_timeout_s:g} s"
                f" ({errors or 'no answer'})"
            ) from None
        try:
            # the gateway refuses /fn/ calls to a function whose http triggers are all off
            await self.watch_triggers()
        except BackendUnavailable:
            await self.stop()
            raise
        if self.autoscaler is not None:
            self._tasks.append(asyncio.create_task(self.autoscaler.run(), name="autoscaler"))

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        self._tasks.clear()
        if self.autoscaler is not None:
            await self.autoscaler.withdraw()
        self._watchers.clear()
        self._trigger_index = None
        self._trigger_subscribers.clear()
        await self._activator.close()
        pools = [*self._pools.values(), *self._version_pools.values()]
        self._pools.clear()
        self._version_pools.clear()
        await asyncio.gather(*(pool.close() for pool in pools), return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        await self.api.close()

    # -- the index (watch callbacks, on the event loop) ---------------------------------

    def _reset_functions(self, items: list[dict[str, Any]]) -> None:
        before = set(self._functions)
        self._functions = {key_of(item): serving_of(item) for item in items}
        for key in before | set(self._functions):
            self._sync_pool(key)

    def _function_event(self, kind: str, item: dict[str, Any]) -> None:
        key = key_of(item)
        if kind == "DELETED":
            self._functions.pop(key, None)
        else:
            self._functions[key] = serving_of(item)
        self._sync_pool(key)

    def _reset_slices(self, items: list[dict[str, Any]]) -> None:
        for namespace, service in self._slices.reset(i for i in items if is_function_slice(i)):
            self._service_changed(namespace, service)

    def _slice_event(self, kind: str, item: dict[str, Any]) -> None:
        if not is_function_slice(item):
            return
        for namespace, service in self._slices.apply(kind, item):
            self._service_changed(namespace, service)

    def _service_changed(self, namespace: str, service: str) -> None:
        owner = self._version_services.get((namespace, service))
        if owner is not None:
            self._sync_pool((namespace, owner[0]))
            return
        function = function_of_service(service)
        if function is not None:
            self._sync_pool((namespace, function))

    def _close_pool(self, pool: EndpointPool) -> None:
        task = asyncio.create_task(pool.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _sync_pool(self, key: Key) -> None:
        namespace, name = key
        entry = self._functions.get(key)
        self._sync_versions(key, entry)
        addresses = self._slices.get(namespace, service_name(name))
        pool = self._pools.get(key)
        if not addresses or entry is None or entry.spec is None:
            if pool is not None:
                del self._pools[key]
                self._close_pool(pool)
            return
        if pool is None:
            pool = self._pools[key] = EndpointPool(
                f"{namespace}/{name}",
                cooldown_s=self._endpoint_cooldown_s,
                grace_s=self.settings.gateway.shutdown_grace_s,
                ending_of=self._ending_in(namespace),
            )
        pool.update(addresses, limit=entry.spec.concurrency)
        self._activator.available(key)

    def _sync_versions(self, key: Key, entry: Serving | None) -> None:
        """The pools of the traffic split's other versions: one per version Service."""
        namespace, name = key
        revisions = {} if entry is None or entry.terminating else entry.revisions
        for owned, (function, version) in list(self._version_services.items()):
            if (owned[0], function) == key and version not in revisions:
                del self._version_services[owned]
        for slot in [s for s in self._version_pools if s[:2] == key and s[2] not in revisions]:
            self._close_pool(self._version_pools.pop(slot))
        for version, spec in revisions.items():
            service = labels.version_object_name(name, version)
            self._version_services[(namespace, service)] = (name, version)
            addresses = self._slices.get(namespace, service)
            slot = (namespace, name, version)
            pool = self._version_pools.get(slot)
            if not addresses:
                if pool is not None:
                    self._close_pool(self._version_pools.pop(slot))
                continue
            if pool is None:
                pool = self._version_pools[slot] = EndpointPool(
                    f"{namespace}/{name}@{version}",
                    cooldown_s=self._endpoint_cooldown_s,
                    grace_s=self.settings.gateway.shutdown_grace_s,
                    ending_of=self._ending_in(namespace),
                )
            pool.update(addresses, limit=spec.concurrency)

    # -- invocation (no I/O) -----------------------------------------------------------

    def serving(self, namespace: str, name: str, version: str | None = None) -> FunctionSpec:
        entry = self._functions.get((namespace, name))
        if entry is None or entry.terminating:
            raise NotFound(f"function {name!r} not found")
        if entry.spec is None:
            raise NotReady(f"function {name!r} is not ready (phase {entry.phase})")
        if version is None or version == entry.spec.version:
            return entry.spec
        revision = entry.revisions.get(version)
        if revision is not None:
            return revision
        if version in entry.spec.routed_versions():
            raise NotReady(f"version {version} of function {name!r} is not deployed yet")
        raise NotFound(
            f"version {version} of function {name!r} is not serving: only its current"
            " version and its traffic targets are"
        )

    def _ending_in(self, namespace: str) -> EndingOf:
        """How a pod of ``namespace`` ended, for a call to it that broke (its caller is told
        ``worker killed: out of memory (128 MiB limit)``, as in embedded mode)."""

        async def ending_of(base_url: str, since: float) -> Ending | None:
            return await pod_ending(self.api, namespace, base_url, since=since)

        return ending_of

    def _serving_spec(self, namespace: str, name: str) -> FunctionSpec | None:
        entry = self._functions.get((namespace, name))
        return None if entry is None or entry.terminating else entry.spec

    def lease_now(self, namespace: str, name: str, version: str | None = None) -> None:
        """No express path in Kubernetes mode yet: every call leases through ``upstream``."""
        return None

    @contextlib.asynccontextmanager
    async def upstream(
        self, namespace: str, name: str, version: str | None = None
    ) -> AsyncIterator[Upstream]:
        spec = self.serving(namespace, name)
        current = version is None or version == spec.version
        key = (namespace, name)
        pool: EndpointPool | None
        #: the call waited for a pod to start (a cold start: sless.backends.tracing)
        cold = False
        if version is None or current:
            if key not in self._pools:  # scaled to zero (or starting): wake it, hold the call
                cold = True
                await self._activator.wake(key, lambda: key in self._pools)
            pool = self._pools[key]
        else:
            self.serving(namespace, name, version)
            pool = self._version_pools.get((namespace, name, version))
            if pool is None:
                raise NotReady(f"version {version} of function {name!r} has no ready instances")
        self._activator.called(key)
        # the autoscaler sizes the current version's Deployment; another version of a
        # traffic split keeps the replicas the operator gives it
        if self.autoscaler is None or not current:
            async with pool.lease() as upstream:
                upstream.cold = cold
                yield upstream
            return
        await self.autoscaler.enter(namespace, name, spec)
        try:
            async with pool.lease() as upstream:
                upstream.cold = cold
                yield upstream
        finally:
            await self.autoscaler.leave(namespace, name)

    def version_endpoints(self, namespace: str, name: str, version: str) -> frozenset[str]:
        """The base URLs calls of one more routed version may go to (tests, metrics)."""
        pool = self._version_pools.get((namespace, name, version))
        return pool.addresses if pool is not None else frozenset()

    def build_durations(self) -> dict[tuple[str, str], tuple[int, float]]:
        return {}  # kaniko Jobs of the operator: their times are the Jobs' own

    def egress_connections(self) -> dict[str, tuple[int, int]]:
        return {}  # pods reach out directly, as their NetworkPolicies allow

    async def release_code(self, sha256: str) -> bool:
        """The operator builds and deletes code with its Functions: a blob no version
        refers to goes when no function known here serves it."""
        return not any(
            entry.spec is not None
            and (
                (entry.spec.code is not None and entry.spec.code.sha256 == sha256)
                or any(
                    r.code is not None and r.code.sha256 == sha256 for r in entry.revisions.values()
                )
            )
            for entry in self._functions.values()
        )

    def endpoints(self, namespace: str, name: str) -> frozenset[str]:
        """The base URLs invocations of this function may go to now (for tests, metrics)."""
        pool = self._pools.get((namespace, name))
        return pool.addresses if pool is not None else frozenset()

    # -- logs, and what the cluster does instead ----------------------------------------

    async def logs(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> str:
        await self._read(namespace, name)
        return await pod_logs(self.api, namespace, name, tail_bytes=tail_bytes, since=since)

    async def log_lines(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> list[tuple[str, float | None]]:
        """No times: the pods' logs are read without the kubelet's timestamps."""
        text = await self.logs(namespace, name, tail_bytes=tail_bytes, since=since)
        return [(line, None) for line in text[: text.rfind("\n") + 1].split("\n")[:-1]]

    def log_bytes(self, namespace: str) -> int | None:
        """None: the kubelet keeps and rotates the pods' logs (its containerLogMaxSize)."""
        return None

    def instance_counts(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        """The replicas of the functions this gateway scaled or saw calls of (as its last
        autoscaling tick read them) and its calls in flight; pod starts are not known here."""
        if self.autoscaler is None:
            return {}
        scaler = self.autoscaler
        return {
            key: (replicas, 0, scaler.inflight(*key)) for key, replicas in scaler.replicas.items()
        }

    async def prewarm(self, namespace: str, name: str, *, until: float) -> None:
        del namespace, name, until  # the Deployment keeps its pods; nothing to do

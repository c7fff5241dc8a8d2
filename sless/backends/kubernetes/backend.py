"""The Kubernetes-mode backend: desired state in Function custom resources, functions in pods.

Writes (``put_function``, ``set_code``, ``delete_function``...) go straight to the API
server; the kopf operator turns them into build Jobs, Deployments and Services and
reports back in the Function's status (``servingSpec`` once a version serves).

The invoke path makes no API round trip: two watches keep an in-memory index current,
one on Functions (the serving spec, its phase and auth mode) and one on EndpointSlices
(the ready addresses of each ``fn-<name>`` Service), and ``upstream()`` leases a pooled
connection to the least busy ready instance (``endpoints.py``). A function scaled to zero
is woken and its call held until a pod is ready (``activation.py``).

Races: a spec is replaced with the resourceVersion it was read at, so a concurrent
change (another gateway replica, the operator's status update) makes the write fail
with 409; it is then read and written again a few times before the caller gets
``Conflict``. Uploads write the status before the spec: the phase ``Validating`` must be
in place before the operator can see code held for review, or it could build it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar

from sless.backends.base import Upstream
from sless.backends.kubernetes.activation import Activator
from sless.backends.kubernetes.endpoints import SERVICE_LABEL, EndpointPool, SliceIndex
from sless.backends.kubernetes.function_secrets import FunctionSecrets
from sless.backends.kubernetes.logs import pod_logs
from sless.backends.kubernetes.resources import (
    FUNCTION_JOBS,
    PLURAL,
    TRIGGERS,
    Serving,
    function_from_body,
    function_of_service,
    is_function_slice,
    is_terminating,
    key_of,
    new_body,
    resource_spec,
    service_name,
    serving_of,
)
from sless.backends.kubernetes.scaling import Autoscaler, gateway_identity
from sless.backends.kubernetes.storing import ResourceStore
from sless.backends.kubernetes.triggering import TriggerResources
from sless.backends.kubernetes.triggers import TriggerIndex
from sless.backends.kubernetes.watching import Watcher
from sless.config import Settings
from sless.errors import BackendUnavailable, Conflict, Invalid, NotFound, NotReady
from sless.kube import JSON_PATCH, AlreadyExists, Forbidden, KubeApi, object_path
from sless.models import (
    CodeRef,
    Function,
    FunctionSpec,
    Phase,
    TrafficTarget,
    is_dns1123_label,
)
from sless.policies import labels
from sless.store import SecretRepository, VersionRepository

log = logging.getLogger(__name__)

Key = tuple[str, str]
T = TypeVar("T")

_WRITE_ATTEMPTS = 5
_LOG_PODS = 5


class _Deleting(Conflict):
    """The function is deleted and its finalizer still runs: retrying now will not help."""


class KubernetesBackend(TriggerResources):
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
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
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

    def _serving_spec(self, namespace: str, name: str) -> FunctionSpec | None:
        entry = self._functions.get((namespace, name))
        return None if entry is None or entry.terminating else entry.spec

    @contextlib.asynccontextmanager
    async def upstream(
        self, namespace: str, name: str, version: str | None = None
    ) -> AsyncIterator[Upstream]:
        spec = self.serving(namespace, name)
        current = version is None or version == spec.version
        key = (namespace, name)
        pool: EndpointPool | None
        if version is None or current:
            if key not in self._pools:  # scaled to zero (or starting): wake it, hold the call
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
                yield upstream
            return
        await self.autoscaler.enter(namespace, name, spec)
        try:
            async with pool.lease() as upstream:
                yield upstream
        finally:
            await self.autoscaler.leave(namespace, name)

    def version_endpoints(self, namespace: str, name: str, version: str) -> frozenset[str]:
        """The base URLs calls of one more routed version may go to (tests, metrics)."""
        pool = self._version_pools.get((namespace, name, version))
        return pool.addresses if pool is not None else frozenset()

    async def _revisions(
        self, namespace: str, name: str, spec: FunctionSpec
    ) -> dict[str, FunctionSpec]:
        """The specs of the versions the traffic split names besides the current one."""
        wanted = spec.routed_versions()[1:]
        if not wanted or self._versions is None:
            return {}
        found = await self._versions.find_many(namespace, name, wanted)
        return {v: found[v].spec.runnable() for v in wanted if v in found}

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

    # -- desired state -----------------------------------------------------------------

    def _path(self, namespace: str, name: str | None = None) -> str:
        # names reach here checked by the gateway; checked again since they go into a URL
        if not is_dns1123_label(namespace) or (name is not None and not is_dns1123_label(name)):
            raise NotFound("function not found")
        path = f"{self._root}/namespaces/{namespace}/{PLURAL}"
        return path if name is None else f"{path}/{name}"

    async def _read(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            body = await self.api.request("GET", self._path(namespace, name))
        except NotFound:
            raise NotFound(f"function {name!r} not found") from None
        if is_terminating(body):
            raise NotFound(f"function {name!r} not found")
        return body

    async def _retrying(self, name: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run a read-modify-write until it does not race; ``Conflict`` after a few tries."""
        for n in range(_WRITE_ATTEMPTS):
            try:
                return await attempt()
            except _Deleting:
                raise
            except Conflict:
                # a stale resourceVersion, or a create that lost to another writer
                await asyncio.sleep(0.05 * (n + 1) * random.uniform(0.5, 1.5))  # noqa: S311
        raise Conflict(f"function {name!r} is being changed concurrently; try again")

    # -- a function's Secret ---------------------------------------------------------

    async def secret_changed(self, namespace: str, name: str) -> None:
        """Rewrite the Secret and the version annotation of every function naming ``name``:
        the operator re-renders the Deployment and its pods roll."""
        for function in await self.list_functions(namespace):
            if name not in function.spec.secret_names():
                continue
            try:
                version = await self._function_secrets.write(
                    namespace, function.name, function.spec
                )
            except Invalid as e:
                log.warning("function %s/%s: %s", namespace, function.name, e.message)
                continue
            annotations = {labels.SECRETS_VERSION_ANNOTATION: version}
            await self.api.merge_patch(
                self._path(namespace, function.name), {"metadata": {"annotations": annotations}}
            )

    async def put_function(self, namespace: str, name: str, spec: FunctionSpec) -> Function:
        # the Secret first: the pods the operator renders next find it
        secrets_version = await self._function_secrets.write(namespace, name, spec)
        revisions = await self._revisions(namespace, name, spec)
        path = self._path(namespace, name)

        async def attempt() -> Function:
            try:
                current = await self.api.request("GET", path)
            except NotFound:
                try:
                    body = new_body(self._api_version, namespace, name, spec, revisions)
                    if secrets_version is not None:
                        body["metadata"]["annotations"] = {
                            labels.SECRETS_VERSION_ANNOTATION: secrets_version
                        }
                    created = await self.api.request("POST", self._path(namespace), body=body)
                except NotFound:
                    # the namespace does not exist: the tenant is not set up in the cluster
                    raise BackendUnavailable(
                        f"namespace {namespace!r} does not exist in the cluster yet"
                    ) from None
                return function_from_body(created)
            if is_terminating(current):
                raise _Deleting(f"function {name!r} is being deleted; try again shortly")
            desired = spec
            if desired.code is None:
                # code comes from uploads: a spec update keeps the uploaded code
                code = (current.get("spec") or {}).get("code")
                if code is not None:
                    desired = spec.model_copy(update={"code": CodeRef.model_validate(code)})
            current["spec"] = resource_spec(desired, revisions)
            annotations = current["metadata"].setdefault("annotations", {})
            if secrets_version is not None:
                annotations[labels.SECRETS_VERSION_ANNOTATION] = secrets_version
            else:
                annotations.pop(labels.SECRETS_VERSION_ANNOTATION, None)
            return function_from_body(await self.api.request("PUT", path, body=current))

        return await self._retrying(name, attempt)

    async def get_function(self, namespace: str, name: str) -> Function:
        return function_from_body(await self._read(namespace, name))

    async def list_functions(self, namespace: str) -> list[Function]:
        try:
            answer = await self.api.request("GET", self._path(namespace))
        except NotFound:
            return []
        functions = []
        for item in answer.get("items") or []:
            if is_terminating(item):
                continue
            try:
                functions.append(function_from_body(item))
            except Invalid as e:
                log.warning("skipping a function in %s: %s", namespace, e.message)
        return sorted(functions, key=lambda f: f.name)

    async def delete_function(self, namespace: str, name: str) -> None:
        await self._read(namespace, name)
        try:
            await self.api.request("DELETE", self._path(namespace, name))
        except NotFound:
            raise NotFound(f"function {name!r} not found") from None
        with contextlib.suppress(NotFound, Forbidden):
            await self.api.delete(
                object_path("v1", "Secret", namespace, labels.function_secret_name(name))
            )
        # stop serving here at once; the watch confirms it
        key = (namespace, name)
        entry = self._functions.get(key)
        if entry is not None:
            self._functions[key] = Serving(phase=entry.phase, spec=entry.spec, terminating=True)

    async def provision_tenant(self, tenant: str) -> None:
        """Create the tenant's Tenant resource if it is missing; the operator makes the
        namespace ``sless-<tenant>`` and its policies from it. Idempotent."""
        body = {
            "apiVersion": self._api_version,
            "kind": "Tenant",
            "metadata": {"name": tenant, "labels": {"app.kubernetes.io/managed-by": "sless"}},
            "spec": {},
        }
        with contextlib.suppress(AlreadyExists):
            await self.api.request("POST", f"{self._root}/tenants", body=body)
            log.info("created the Tenant resource of %s", tenant)

    async def remove_tenant(self, tenant: str) -> None:
        """Delete the Tenant resource: the namespace it owns goes with it."""
        with contextlib.suppress(NotFound):
            await self.api.request("DELETE", f"{self._root}/tenants/{tenant}")

    async def delete_namespace(self, namespace: str) -> None:
        """Delete every Function, Trigger and FunctionJob of a tenant; the operator's
        finalizers clean up after them.

        The namespace itself belongs to the operator (it follows the Tenant resource).
        """
        try:
            answer = await self.api.request("GET", self._path(namespace))
        except NotFound:
            answer = {}
        # one by one: the gateway's RBAC grants delete, not deletecollection
        for item in answer.get("items") or []:
            with contextlib.suppress(NotFound):
                await self.api.request(
                    "DELETE", self._path(namespace, str(item["metadata"]["name"]))
                )
        await self._triggers.delete_all(namespace)
        await self._jobs.delete_all(namespace)
        for key, entry in list(self._functions.items()):
            if key[0] == namespace:
                self._functions[key] = Serving(phase=entry.phase, spec=entry.spec, terminating=True)

    async def _patch_status(
        self, namespace: str, name: str, current: dict[str, Any], fields: dict[str, Any]
    ) -> dict[str, Any]:
        """Set ``fields`` of the status, replacing each one whole (a merge patch would
        merge an old validation report's keys into the new one)."""
        fields = {**fields, "updated_at": datetime.now(UTC).isoformat()}
        if isinstance(current.get("status"), dict):
            ops = [{"op": "add", "path": f"/status/{key}", "value": v} for key, v in fields.items()]
        else:
            ops = [{"op": "add", "path": "/status", "value": fields}]
        return await self.api.request(
            "PATCH",
            self._path(namespace, name) + "/status",
            body=ops,
            content_type=JSON_PATCH,
        )

    async def set_code(
        self,
        namespace: str,
        name: str,
        code: CodeRef,
        *,
        held: bool,
        validation: dict[str, Any],
        traffic: Sequence[TrafficTarget] = (),
    ) -> Function:
        path = self._path(namespace, name)
        current = await self._read(namespace, name)
        phase = Phase.VALIDATING if held else Phase.PENDING
        routed = FunctionSpec(code=code, traffic=list(traffic))
        revisions = {
            v: r.model_dump(mode="json")
            for v, r in (await self._revisions(namespace, name, routed)).items()
        }
        # status first: code held for review must never be visible while the phase
        # still lets the operator build it
        patched: dict[str, Any] | None = await self._patch_status(
            namespace,
            name,
            current,
            {
                "phase": phase.value,
                "message": "held for provider review" if held else "",
                "validation": validation,
            },
        )

        async def attempt() -> Function:
            nonlocal patched
            body = patched if patched is not None else await self._read(namespace, name)
            patched = None  # a retry reads afresh
            spec = body.setdefault("spec", {})
            spec["code"] = code.model_dump(mode="json")
            spec["traffic"] = [target.model_dump(mode="json") for target in traffic]
            spec["revisions"] = revisions
            return function_from_body(await self.api.request("PUT", path, body=body))

        return await self._retrying(name, attempt)

    async def decide_review(
        self, namespace: str, name: str, sha256: str, *, approve: bool, reason: str
    ) -> None:
        """Release held code (Pending: the operator builds it) or reject it, atomically:
        the patch tests that the reviewed code is still the function's and still held."""
        await self._read(namespace, name)
        phase = Phase.PENDING if approve else Phase.REJECTED
        message = "" if approve else f"rejected by the provider's review: {reason}"
        ops = [
            {"op": "test", "path": "/spec/code/sha256", "value": sha256},
            {"op": "test", "path": "/status/phase", "value": Phase.VALIDATING.value},
            {"op": "replace", "path": "/status/phase", "value": phase.value},
            {"op": "add", "path": "/status/message", "value": message},
            {"op": "add", "path": "/status/updated_at", "value": datetime.now(UTC).isoformat()},
        ]
        try:
            await self.api.request(
                "PATCH",
                self._path(namespace, name) + "/status",
                body=ops,
                content_type=JSON_PATCH,
            )
        except Invalid:
            return  # a test failed: newer code replaced the reviewed one, nothing to release

    async def record_validation(
        self, namespace: str, name: str, validation: dict[str, Any]
    ) -> None:
        current = await self._read(namespace, name)
        await self._patch_status(namespace, name, current, {"validation": validation})

    # -- logs, and what the cluster does instead ----------------------------------------

    async def logs(self, namespace: str, name: str, *, tail_bytes: int) -> str:
        await self._read(namespace, name)
        return await pod_logs(self.api, namespace, name, tail_bytes=tail_bytes)

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

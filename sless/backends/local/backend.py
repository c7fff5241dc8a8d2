"""The embedded-mode backend: desired state in PostgreSQL, functions in bubblewrap.

A reconciler brings the running workers in line with the ``functions`` table. It wakes on
``NOTIFY sless_functions`` (sent by every change, from any gateway process) and also
re-reads everything periodically, so a missed notification only delays convergence.
For a function whose phase is ``Pending`` it builds the code (once per digest), checks in
the sandbox that the handler imports, and marks the version Ready, which makes it the
serving version. A version that fails to build leaves the previous one serving.
``start`` returns once every function that served before has its pool again
(``until_served``): the gateway then listens, and the event services fire what the
restart recovered, without meeting a Ready function that has no pool yet.

Held and rejected code is never built nor started: the code gate (``sless.store.CodeGate``)
is asked when a spec is written (its phase is then Validating or Rejected, not Pending),
again before every build, and again before every pool starts, whatever the row says. The
last allowed version keeps serving meanwhile.

The invoke path never touches the database: it reads an in-memory index of functions
that the reconciler keeps current, and an in-memory view of ``http`` triggers
(``http_disabled``): re-read when a trigger is written here, on ``NOTIFY sless_triggers``
(sent by every trigger change, from any gateway process) and at every periodic resync.

Secrets a function names (``spec.secrets``) are read from PostgreSQL (decrypted) when its
pool is configured and given to each worker as environment variables: bubblewrap gets
them through its memfd argument list, so they never touch the disk nor a command line.
The pool's version includes when each of those secrets was last written (never a digest
of a value), so a changed secret rolls the workers: ``secret_changed`` notifies every
gateway process to reconcile the functions that use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import ClassVar

import asyncpg

from sless.backends.local.building import Builder, BuildError
from sless.backends.local.http_triggers import TRIGGERS_CHANNEL, HttpTriggerView
from sless.backends.local.launching import MissingSecrets, WorkerLauncher
from sless.backends.local.logfiles import LogFiles
from sless.backends.local.pooling import FunctionPool
from sless.backends.local.reviewing import CodeReviews
from sless.backends.local.rundirs import RunDir, remove_abandoned
from sless.backends.local.triggering import TriggerTables
from sless.backends.local.uids import SandboxUids, UidRange, can_switch_uid, make_private
from sless.backends.local.version_pools import VersionPools
from sless.config import Settings
from sless.models import (
    Function,
    FunctionSpec,
    Phase,
    Runtime,
    namespace_for,
)
from sless.sandbox import (
    PrestartPool,
    TunnelCaps,
    check_handler,
    default_runtimes_dir,
    reachable_by_others,
    settle_processes,
)
from sless.store import (
    NOTIFY_CHANNEL,
    BlobStore,
    CodeGate,
    FunctionRecord,
    FunctionRepository,
    JobRepository,
    QueueRepository,
    SecretRepository,
    TenantLimitsRepository,
    TriggerRepository,
    VersionRepository,
    cipher_for,
)
from sless.tasks import cancel_and_wait

log = logging.getLogger(__name__)

_RESYNC_INTERVAL_S = 30.0
_REAP_INTERVAL_S = 5.0
Key = tuple[str, str]


class LocalBackend(TriggerTables, VersionPools, CodeReviews):
    #: cron, jobs and RabbitMQ consumers run in ``sless up`` itself
    events_in_process: ClassVar[bool] = True

    def __init__(
        self,
        settings: Settings,
        pool: asyncpg.Pool,
        blobs: BlobStore,
    ) -> None:
        self.settings = settings
        self.db = pool
        self.functions = FunctionRepository(pool)
        self.triggers = TriggerRepository(pool)
        self.jobs = JobRepository(pool)
        self.secrets = SecretRepository(pool, cipher_for(settings))
        self.blobs = blobs
        self.builder = Builder(
            settings.data_dir / "builds", blobs, settings.build, settings.validation
        )
        self.runtimes_dir = default_runtimes_dir()
        self.logfiles = LogFiles(
            settings.data_dir / "logs",
            max_bytes=settings.sandbox.log_max_bytes,
            tenant_max_bytes=settings.limits.max_log_bytes,
            rate=settings.sandbox.log_rate_bytes,
            burst=settings.sandbox.log_burst_bytes,
        )
        self.launcher = WorkerLauncher(settings, self.secrets, self.logfiles, self.runtimes_dir)
        #: the largest answer a call may read (Serving)
        self.max_response_bytes = settings.gateway.max_response_bytes
        self.versions = VersionRepository(pool)
        #: which code may serve: asked before every build and every pool start
        self.gate = CodeGate(self.versions)
        #: the egress connections each tenant and function holds, shared by every proxy
        self.tunnel_caps = TunnelCaps(
            per_tenant=settings.sandbox.egress_tunnels_per_tenant,
            per_function=settings.sandbox.egress_tunnels_per_function,
        )
        self._index: dict[Key, FunctionRecord] = {}
        #: the pool of each function's serving version (the current version of its spec)
        self._pools: dict[Key, FunctionPool] = {}
        #: the pools of the other versions its traffic split names: (namespace, name, v3)
        self._version_pools: dict[tuple[str, str, str], FunctionPool] = {}
        self._dirty: dict[Key, asyncio.Event] = {}
        self._workers: dict[Key, asyncio.Task[None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._listener: asyncpg.Connection | None = None
        self._run: RunDir | None = None
        self._run_dir: Path | None = None
        self._draining: set[asyncio.Task[None]] = set()
        self.http_triggers = HttpTriggerView(pool)

    @property
    def prestart(self) -> PrestartPool | None:
        """The pre-started generic workers (None: off, or not started)."""
        return self.launcher.prestart

    # -- lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        sandbox = self.settings.sandbox
        if can_switch_uid():
            uid_range = UidRange.of(sandbox)
            uid_range.check_host()  # UidRangeError: one line for the operator
            self.launcher.uids = SandboxUids(self.db, uid_range)
            make_private(self.settings.data_dir)
        else:
            log.warning(
                "the gateway is not root: every function runs as its uid %d, not as a host"
                " uid of its own (docs/SECURITY.md)",
                os.geteuid(),
            )
        # Unix socket paths are limited to 108 bytes: keep them short, under /tmp. The
        # workers' uids must reach their own directories in it, and list none: 0711.
        base = Path(tempfile.gettempdir())
        if self.launcher.uids is not None and not reachable_by_others(base):
            base = Path("/tmp")  # noqa: S108 (a private TMPDIR: the workers could not enter)
        await self.launcher.choose_isolation()
        await asyncio.to_thread(remove_abandoned, base)  # of gateways killed before they stopped
        self._run = RunDir.make(base)
        self._run_dir = self._run.path
        self.launcher.run_dir = self._run_dir
        self.builder.start(self._run_dir)
        if sandbox.prestart_size > 0 and not sandbox.unsafe_no_sandbox:
            self.launcher.prestart = PrestartPool(
                # next to the tenants' views of the builds: the code is hard-linked
                slots_dir=self._run_dir / "prestart",
                sockets_dir=self._run_dir,
                size=sandbox.prestart_size,
                limits=self.launcher.limits(FunctionSpec.model_fields["memory_mb"].default),
                runtimes_dir=self.runtimes_dir,
                bwrap=sandbox.bwrap,
                start_timeout_s=sandbox.start_timeout_s,
                seccomp=sandbox.seccomp,
                tenants=sandbox.prestart_tenants,
                isolation=self.launcher.isolation,
            )
            if self.launcher.uids is None:
                self.launcher.prestart.start()  # one shared set: every worker is our uid
            # else a tenant's generic workers start with its first deploy or call
        self._listener = await self.db.acquire()
        await self._listener.add_listener(NOTIFY_CHANNEL, self._on_notify)
        await self._listener.add_listener(TRIGGERS_CHANNEL, self.http_triggers.on_notify)
        await self.http_triggers.refresh()
        stored = await self.resync()
        # what served before this start serves again before the gateway does, or fires
        # cron ticks and queued calls: none may find a Ready function without its pool
        await self.until_served([r.key for r in stored if r.serving_spec is not None])
        self._tasks.append(asyncio.create_task(self._periodic(), name="local-backend-periodic"))
        self._tasks.append(
            asyncio.create_task(
                self.logfiles.keep_bounded(self._log_limits), name="local-backend-log-bounds"
            )
        )

    async def stop(self) -> None:
        if (refreshing := self.http_triggers.detach()) is not None:
            self._tasks.append(refreshing)
        # first: a notification now would schedule a reconcile that nobody cancels
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.remove_listener(NOTIFY_CHANNEL, self._on_notify)
                await self._listener.remove_listener(TRIGGERS_CHANNEL, self.http_triggers.on_notify)
            await self.db.release(self._listener)
            self._listener = None
        await cancel_and_wait([*self._tasks, *self._workers.values()])
        self._tasks.clear()
        self._workers.clear()
        grace = self.settings.gateway.shutdown_grace_s
        pools = [*self._pools.values(), *self._version_pools.values()]
        await asyncio.gather(*(pool.close(grace) for pool in pools))
        self._pools.clear()
        self._version_pools.clear()
        # pools a new version replaced, still draining: no worker outlives the loop
        await asyncio.gather(*self._draining, return_exceptions=True)
        if self.launcher.prestart is not None:
            await self.launcher.prestart.close()
        # reaped before the loop can close with a process's transport open (``reaping``)
        await settle_processes()
        await asyncio.to_thread(self.logfiles.close)
        if self._run is not None:
            await asyncio.to_thread(self._run.remove)

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            data = json.loads(payload)
            key = (str(data["namespace"]), str(data["name"]))
        except (ValueError, KeyError, TypeError):
            return
        self.schedule(key)

    async def _periodic(self) -> None:
        ticks = 0
        while True:
            await asyncio.sleep(_REAP_INTERVAL_S)
            ticks += 1
            for pool in [*self._pools.values(), *self._version_pools.values()]:
                try:
                    await pool.reap_idle(self.settings.sandbox.idle_timeout_s)
                except Exception:
                    log.exception("reaping %s failed", pool.name)
            if ticks * _REAP_INTERVAL_S >= _RESYNC_INTERVAL_S:
                ticks = 0
                with contextlib.suppress(asyncpg.PostgresError, OSError):
                    await self.http_triggers.refresh()
                    await self.resync()

    async def resync(self) -> list[FunctionRecord]:
        """Reconcile every function stored or served; returns the stored ones."""
        records = await self.functions.list_all()
        seen = {record.key for record in records}
        for key in seen | set(self._index) | set(self._pools):
            self.schedule(key)
        return records

    # -- the http trigger view -----------------------------------------------------------

    async def refresh_http_triggers(self) -> None:
        await self.http_triggers.refresh()

    def http_disabled(self, namespace: str, name: str) -> bool:
        """The function has http triggers and every one of them is disabled. No I/O."""
        return self.http_triggers.disabled(namespace, name)

    # -- reconciling -------------------------------------------------------------------

    def schedule(self, key: Key) -> None:
        """Reconcile ``key`` soon; changes that arrive meanwhile coalesce into one pass."""
        event = self._dirty.setdefault(key, asyncio.Event())
        event.set()
        task = self._workers.get(key)
        if task is None or task.done():
            self._workers[key] = asyncio.create_task(self._reconcile_loop(key, event))

    async def _reconcile_loop(self, key: Key, event: asyncio.Event) -> None:
        while event.is_set():
            event.clear()
            try:
                await self.reconcile(key)
            except (asyncpg.PostgresError, OSError) as e:
                log.warning("reconcile %s/%s failed, will retry: %s", *key, type(e).__name__)
                await asyncio.sleep(1.0)
                event.set()
            except Exception:
                log.exception("reconcile %s/%s failed", *key)

    async def reconcile(self, key: Key) -> None:
        namespace, name = key
        record = await self.functions.find(namespace, name)
        if record is None:
            self._index.pop(key, None)
            pool = self._pools.pop(key, None)
            if pool is not None:
                await pool.close(self.settings.gateway.shutdown_grace_s)
            await self._configure_versions(key, None)
            self.logfiles.remove(*key)
            return
        self._index[key] = record
        function = record.function
        if function.status.phase is Phase.PENDING and function.spec.code is not None:
            if key not in self._pools and record.serving_spec is not None:
                await self._configure_pool(key, record)  # what served, while this builds
            checked = await self._build_and_check(record)
            if checked is not None:
                # serve it first, then say Ready: a call made as soon as the phase reads
                # Ready must find the pool (it used to get 503 "not ready" in between)
                candidate = FunctionRecord(record.function, checked, record.generation)
                await self._configure_pool(key, candidate)
                await self.functions.set_status(
                    namespace,
                    name,
                    phase=Phase.READY,
                    message="",
                    generation=record.generation,
                    serving_spec=checked,
                )
            # what the store holds now wins (a newer spec may have arrived meanwhile)
            record = await self.functions.get(namespace, name)
            self._index[key] = record
        await self._configure_pool(key, record)

    async def _build_and_check(self, record: FunctionRecord) -> FunctionSpec | None:
        """Build the spec and load its handler once; the spec if it may serve, else None
        (its phase then says why)."""
        function = record.function
        spec = function.spec
        code = spec.code
        if code is None:
            return None
        namespace, name = record.key
        refused = await self.gate.refused_spec(namespace, name, spec)
        if refused:
            # held or rejected code is never built, whatever the row's phase says
            await self.functions.set_status(
                namespace,
                name,
                phase=refused[0].phase,
                message=refused[0].message,
                generation=record.generation,
            )
            return None
        updated = await self.functions.set_status(
            namespace, name, phase=Phase.BUILDING, message="building", generation=record.generation
        )
        if not updated:
            return None  # the spec changed meanwhile; the newer change reconciles
        try:
            secret_env, _ = await self.launcher.secret_env(namespace, spec)
            host_ids = await self.launcher.host_ids(namespace)
            build = await self.builder.ensure_built(spec.runtime, code.sha256, host_ids)
            ok, message = await check_handler(
                self.launcher.sandbox_spec(
                    namespace,
                    name,
                    spec,
                    build,
                    serial=0,
                    secret_env=secret_env,
                    host_ids=host_ids,
                ),
                runtimes_dir=self.runtimes_dir,
                bwrap=self.settings.sandbox.bwrap,
                unsafe_no_sandbox=self.settings.sandbox.unsafe_no_sandbox,
                timeout_s=self.settings.sandbox.start_timeout_s,
                seccomp=self.settings.sandbox.seccomp,
                isolation=self.launcher.isolation,
            )
            if not ok:
                raise BuildError(f"the handler does not load: {message}")
        except (BuildError, MissingSecrets) as e:
            await self.functions.set_status(
                namespace, name, phase=Phase.FAILED, message=str(e), generation=record.generation
            )
            return None
        return spec

    async def secret_changed(self, namespace: str, name: str) -> None:
        """Reconcile, in every gateway process, the functions that use secret ``name``."""
        for (ns, function), record in list(self._index.items()):
            serving = record.serving_spec
            uses = [record.function.spec, *([serving] if serving is not None else [])]
            if ns == namespace and any(name in spec.secret_names() for spec in uses):
                payload = json.dumps({"namespace": ns, "name": function})
                await self.db.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL, payload)

    async def logs(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> str:
        await self.functions.get(namespace, name)
        return await self.logfiles.tail(namespace, name, tail_bytes, since)

    async def log_lines(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> list[tuple[str, float | None]]:
        await self.functions.get(namespace, name)
        return await self.logfiles.lines(namespace, name, tail_bytes, since)

    # -- desired state -----------------------------------------------------------------

    async def put_function(self, namespace: str, name: str, spec: FunctionSpec) -> Function:
        existing = await self.functions.find(namespace, name)
        if existing is not None and spec.code is None:
            spec = spec.model_copy(update={"code": existing.function.spec.code})
        # a spec whose code may not serve is stored with the phase that says why: a PUT
        # never puts held or rejected code back to Pending (the reconciler asks again)
        refused = await self.gate.refused_spec(namespace, name, spec)
        phase, message = (refused[0].phase, refused[0].message) if refused else (Phase.PENDING, "")
        if existing is not None and spec.code is None:
            # nothing uploaded yet: nothing to build, and the phase a refused upload left
            # (Rejected, with why) stays, as in Kubernetes mode where a PUT writes no status
            status = existing.function.status
            phase, message = status.phase, status.message
        record = await self.functions.upsert_spec(
            namespace, name, spec, phase=phase, message=message
        )
        return record.function

    async def get_function(self, namespace: str, name: str) -> Function:
        return (await self.functions.get(namespace, name)).function

    async def list_functions(self, namespace: str) -> list[Function]:
        return [record.function for record in await self.functions.list_all(namespace)]

    async def delete_function(self, namespace: str, name: str) -> None:
        record = await self.functions.delete(namespace, name)
        await self.reconcile(record.key)
        await self._collect_garbage(record)

    async def provision_tenant(self, tenant: str) -> None:
        """The tenant's host uid (allocated now, once) and its pre-started workers: its first
        call after its first deploy meets one."""
        await self.launcher.host_ids(namespace_for(tenant))

    async def tenant_limits(self, tenant: str) -> dict[str, int]:
        """None of the mode's own: the provider's are in PostgreSQL (``tenant_limits``)."""
        return {}

    def log_bytes(self, namespace: str) -> int | None:
        return self.logfiles.usage(namespace)

    async def _log_limits(self) -> dict[str, int]:
        """``namespace → max_log_bytes`` of the tenants whose provider set one."""
        stored = await TenantLimitsRepository(self.db).all()
        return {
            namespace_for(tenant): limits["max_log_bytes"]
            for tenant, limits in stored.items()
            if isinstance(limits.get("max_log_bytes"), int) and limits["max_log_bytes"] > 0
        }

    async def remove_tenant(self, tenant: str) -> None:
        """Nothing to remove in embedded mode (``delete_namespace`` removed its objects)."""

    async def delete_namespace(self, namespace: str) -> None:
        await self.triggers.delete_namespace(namespace)
        await self.http_triggers.changed_here()
        await self.jobs.delete_namespace(namespace)
        await QueueRepository(self.db).delete_namespace(namespace)
        for record in await self.functions.delete_namespace(namespace):
            await self.reconcile(record.key)
            await self._collect_garbage(record)

    async def _collect_garbage(self, record: FunctionRecord) -> None:
        """Remove builds and blobs no other function and no version uses."""
        for spec in (record.function.spec, record.serving_spec):
            if spec is None or spec.code is None:
                continue
            if await self.versions.sha256_in_use(spec.code.sha256):
                continue  # a version keeps it (the gateway collects it with the version)
            if not await self.functions.sha256_in_use(spec.code.sha256):
                self.builder.remove(spec.runtime, spec.code.sha256)
                self.launcher.drop_views(
                    self.builder.path_for(spec.runtime, spec.code.sha256).root.name
                )
                await self.blobs.delete(spec.code.sha256)

    def build_durations(self) -> dict[tuple[str, str], tuple[int, float]]:
        return dict(self.builder.durations)

    async def release_code(self, sha256: str) -> bool:
        """Remove the builds of code no function refers to (the caller deletes the blob)."""
        if await self.functions.sha256_in_use(sha256):
            return False
        for runtime in Runtime:
            self.builder.remove(runtime, sha256)
            self.launcher.drop_views(self.builder.path_for(runtime, sha256).root.name)
        return True

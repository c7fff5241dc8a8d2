"""The worker pools of a function's versions in embedded mode: which run, and which one
serves a call.

A mixin of ``LocalBackend``. The current version of the serving spec has its pool; each
other version its traffic split names has one too (its spec from the versions table,
builds cached by sha256). No pool ever starts for a version the code gate refuses (held,
rejected, not recorded): ``_start_pool`` asks it, whoever calls it. A changed version
swaps pools once the new one is warm (a first pool serves at once); a traffic target that
becomes the current version (a rollback) is adopted without a cold start, and a pool no
longer routed to drains in the background.
The invoke path reads these pools from memory only.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from contextlib import AbstractAsyncContextManager

from pydantic import SecretStr

from sless.backends.base import Upstream
from sless.backends.local.building import Builder
from sless.backends.local.launching import MissingSecrets, WorkerLauncher, version_of
from sless.backends.local.pooling import FunctionPool, HeldLease
from sless.config import Settings
from sless.errors import NotFound, NotReady, SlessError
from sless.models import FunctionSpec
from sless.sandbox import EgressProxy, TunnelCaps, Worker
from sless.store import CodeGate, FunctionRecord, VersionRepository

log = logging.getLogger(__name__)

Key = tuple[str, str]
#: how long a start waits for the functions that served before it to serve again
SERVE_AT_START_S = 60.0


class NotAdmitted(Exception):
    """The code gate refuses the version a pool would run: it is never started."""


class VersionPools:
    settings: Settings
    launcher: WorkerLauncher
    builder: Builder
    versions: VersionRepository
    gate: CodeGate
    tunnel_caps: TunnelCaps
    _index: dict[Key, FunctionRecord]
    #: the pool of each function's serving version (the current version of its spec)
    _pools: dict[Key, FunctionPool]
    #: the pools of the other versions its traffic split names: (namespace, name, v3)
    _version_pools: dict[tuple[str, str, str], FunctionPool]
    _draining: set[asyncio.Task[None]]
    #: each function's reconcile in progress
    _workers: dict[Key, asyncio.Task[None]]

    async def until_served(self, keys: list[Key], timeout_s: float = SERVE_AT_START_S) -> None:
        """Wait until each function of ``keys`` has its serving pool (its first worker may
        still be starting: calls wait for it, as for any cold start), or its reconcile
        ended without one (refused code, a missing secret: logged), at most ``timeout_s``:
        then it names those still missing, which serve once their reconcile ends."""
        deadline = time.monotonic() + timeout_s
        while waiting := [k for k in keys if k not in self._pools and not self._reconciled(k)]:
            if time.monotonic() >= deadline:
                names = ", ".join(f"{ns}/{name}" for ns, name in waiting[:10])
                log.warning(
                    "serving before %d function(s) had their pools again: %s",
                    len(waiting),
                    names,
                )
                return
            await asyncio.sleep(0.02)

    def _reconciled(self, key: Key) -> bool:
        task = self._workers.get(key)
        return task is None or task.done()

    def egress_connections(self) -> dict[str, tuple[int, int]]:
        """What the egress proxies of the pools hold and refused, per namespace (metrics)."""
        return self.tunnel_caps.counts()

    async def _configure_pool(self, key: Key, record: FunctionRecord) -> None:
        serving = record.serving_spec
        current = self._pools.get(key)
        if serving is None or serving.code is None:
            if current is not None:
                del self._pools[key]
                await current.close(self.settings.gateway.shutdown_grace_s)
            await self._configure_versions(key, None)
            return
        namespace, name = key
        try:
            secret_env, stamps = await self.launcher.secret_env(namespace, serving)
        except MissingSecrets as e:
            # keep what serves (with the values it started with) rather than start workers
            # without a variable the handler expects
            log.warning("not (re)starting %s/%s: %s", namespace, name, e)
            return
        # the traffic split routes calls; it does not shape a worker
        version = version_of(serving.runnable(), stamps)
        if current is not None and current.version == version:
            current.spec = serving  # only the traffic split may differ
            await current.ensure_warm()
            await self._configure_versions(key, serving)
            return
        adopted = None
        if serving.version is not None:
            adopted = self._version_pools.pop((namespace, name, serving.version), None)
        if adopted is not None and adopted.version == version:
            # a traffic target became the current version (e.g. a rollback): no cold start
            pool = adopted
            pool.spec = serving
        else:
            if adopted is not None:
                self._drain(adopted)
            # a version change swaps pools once the new one is warm; a first pool serves
            # at once (its calls wait for its first worker rather than get 503)
            first = current is None
            try:
                pool = await self._start_pool(
                    namespace, name, serving, version, secret_env, warm=not first
                )
            except NotAdmitted as e:
                log.warning("not serving %s/%s: %s", namespace, name, e)
                if current is not None:
                    del self._pools[key]
                    self._drain(current)
                await self._configure_versions(key, None)
                return
            if first:
                self._pools[key] = pool
                await self._warm(pool)
        self._pools[key] = pool
        if current is not None:
            old = current.spec.version
            if old is not None and old in serving.routed_versions():
                # the old current version keeps a share of the traffic: it keeps serving
                self._version_pools.setdefault((namespace, name, old), current)
            else:
                # the old version drains in the background while the new one serves
                self._drain(current)
        await self._configure_versions(key, serving)

    def _drain(self, pool: FunctionPool) -> None:
        task = asyncio.create_task(pool.close(self.settings.gateway.shutdown_grace_s))
        self._draining.add(task)
        task.add_done_callback(self._draining.discard)

    async def _configure_versions(self, key: Key, serving: FunctionSpec | None) -> None:
        """Run the versions the serving spec's traffic split names besides the current one
        (their specs from the versions table; builds cached by sha256), stop the others."""
        namespace, name = key
        wanted = [] if serving is None else serving.routed_versions()[1:]
        for (ns, function, version), pool in list(self._version_pools.items()):
            if (ns, function) == key and version not in wanted:
                del self._version_pools[(ns, function, version)]
                self._drain(pool)
        if not wanted:
            return
        records = await self.versions.find_many(namespace, name, wanted)
        for wanted_version in wanted:
            found = records.get(wanted_version)
            if found is None:
                log.warning(
                    "%s/%s: version %s is gone; not serving it", namespace, name, wanted_version
                )
                continue
            spec = found.spec
            try:
                secret_env, stamps = await self.launcher.secret_env(namespace, spec)
            except MissingSecrets as e:
                log.warning("not starting %s/%s@%s: %s", namespace, name, wanted_version, e)
                continue
            version = version_of(spec.runnable(), stamps)
            slot = (namespace, name, wanted_version)
            existing = self._version_pools.get(slot)
            if existing is not None and existing.version == version:
                await existing.ensure_warm()
                continue
            try:
                self._version_pools[slot] = await self._start_pool(
                    namespace, name, spec, version, secret_env
                )
            except NotAdmitted as e:
                log.warning("not serving %s/%s@%s: %s", namespace, name, wanted_version, e)
                continue
            if existing is not None:
                self._drain(existing)

    async def _start_pool(
        self,
        namespace: str,
        name: str,
        serving: FunctionSpec,
        version: str,
        secret_env: dict[str, SecretStr],
        *,
        warm: bool = True,
    ) -> FunctionPool:
        """A new pool of one version of a function (its build made if missing), warmed to
        its minimum unless ``warm`` is False. ``NotAdmitted`` for a version the code gate
        refuses: held or rejected code never starts, whoever asks."""
        assert serving.code is not None  # checked by the callers; not a security check
        refused = await self.gate.refused(namespace, name, [serving.version])
        if refused:
            raise NotAdmitted(refused[0].message)
        build = self.builder.path_for(serving.runtime, serving.code.sha256)
        if not (build.root / ".complete").exists():
            # e.g. another gateway process built it, or the build dir was removed
            build = await self.builder.ensure_built(
                serving.runtime, serving.code.sha256, await self.launcher.host_ids(namespace)
            )
        proxy: EgressProxy | None = None
        if serving.egress:
            proxy = EgressProxy(
                self.launcher.short_path(f"{namespace}/{name}/{version}", "egress.sock"),
                serving.egress,
                name=f"{namespace}/{name}",
                caps=self.tunnel_caps,
                tenant=namespace,
                private_allowed=self.settings.egress.private_allowed,
            )
            await proxy.start()
            host_ids = await self.launcher.host_ids(namespace)
            if host_ids is not None:
                # connectable by this tenant's workers only (and the gateway)
                os.chown(proxy.socket_path, 0, host_ids.gid)
                proxy.socket_path.chmod(0o660)
        egress_socket = proxy.socket_path if proxy is not None else None

        def note(line: str) -> None:
            self.launcher.logs.append(namespace, name, line)

        async def factory(serial: int) -> Worker:
            return await self.launcher.start(
                namespace,
                name,
                serving,
                build,
                serial,
                egress_socket=egress_socket,
                secret_env=secret_env,
            )

        pool = FunctionPool(
            f"{namespace}/{name}",
            serving,
            version,
            factory,
            # the function's bound, within the tenant's quota (which may have been lowered)
            max_workers=min(serving.max_instances, self.settings.limits.max_instances),
            queue_timeout_s=self.settings.gateway.queue_timeout_s,
            note=note,
        )
        if proxy is not None:
            pool.on_close.append(proxy.close)
        if warm:
            await self._warm(pool)
        return pool

    @staticmethod
    async def _warm(pool: FunctionPool) -> None:
        try:
            await pool.ensure_warm()
        except Exception as e:
            log.warning("could not pre-warm %s: %s", pool.name, e)

    # -- invocation --------------------------------------------------------------------

    def known(self, namespace: str, name: str) -> FunctionRecord | None:
        return self._index.get((namespace, name))

    def _pool_for(self, namespace: str, name: str, version: str | None) -> FunctionPool:
        """The pool that serves ``version`` (None: the current one); NotFound or NotReady."""
        key = (namespace, name)
        pool = self._pools.get(key)
        if pool is not None:
            if version is None or version == pool.spec.version:
                return pool
            other = self._version_pools.get((namespace, name, version))
            if other is not None:
                return other
            if version in pool.spec.routed_versions():
                raise NotReady(f"version {version} of function {name!r} is not ready yet")
            raise NotFound(
                f"version {version} of function {name!r} is not serving: only its current"
                " version and its traffic targets are"
            )
        record = self._index.get(key)
        if record is None:
            raise NotFound(f"function {name!r} not found")
        phase = record.function.status.phase.value
        raise NotReady(f"function {name!r} is not ready (phase {phase})")

    def serving(self, namespace: str, name: str, version: str | None = None) -> FunctionSpec:
        """The spec of the version that serves invocations (or of ``version``), from memory."""
        return self._pool_for(namespace, name, version).spec

    def upstream(
        self, namespace: str, name: str, version: str | None = None
    ) -> AbstractAsyncContextManager[Upstream]:
        return self._pool_for(namespace, name, version).lease()

    def lease_now(self, namespace: str, name: str, version: str | None = None) -> HeldLease | None:
        """A warm worker with room and an idle connection, at once, or None."""
        try:
            pool = self._pool_for(namespace, name, version)
        except SlessError:
            return None
        return pool.lease_now()

    def instance_counts(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        counts = {key: (p.size, p.started, p.inflight) for key, p in self._pools.items()}
        for (namespace, name, _), p in self._version_pools.items():
            size, started, inflight = counts.get((namespace, name), (0, 0, 0))
            counts[(namespace, name)] = (size + p.size, started + p.started, inflight + p.inflight)
        return counts

    def version_pool(self, namespace: str, name: str, version: str) -> FunctionPool | None:
        """The pool of a traffic target that is not the current version (tests, metrics)."""
        return self._version_pools.get((namespace, name, version))

    def pool(self, namespace: str, name: str) -> FunctionPool | None:
        return self._pools.get((namespace, name))

    async def prewarm(self, namespace: str, name: str, *, until: float) -> None:
        """Have a worker of the serving version up now and until ``until`` (monotonic)."""
        pool = self._pools.get((namespace, name))
        if pool is not None:
            await pool.keep_warm_until(until)

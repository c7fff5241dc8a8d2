"""What ``sless dev`` serves: one worker of the folder's code, made as embedded mode makes it.

The parts are the platform's own: the code is stored and built by ``Builder`` (the same
installers, run as an unprivileged uid), the worker is described by ``WorkerLauncher``
(``sandbox_spec``: the runtime server in bubblewrap, or gVisor when
``SLESS_EMBEDDED_ISOLATION`` says so, under the seccomp allowlist, with the spec's memory,
timeout and concurrency) and started by ``start_worker``; the spec's egress goes through
an ``EgressProxy`` and nothing else leaves. Every call goes through ``call_function``,
the gateway's call path, so a timeout or a dead worker reads as it does when deployed.

``DevServing`` is the ``Serving`` of one function, whose worker ``replace`` swaps: the
new one is started first, so code that does not start leaves the previous one serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import SecretStr

from sless.backends import Upstream
from sless.backends.http1 import Http1Client
from sless.backends.local.building import Builder
from sless.backends.local.launching import WorkerLauncher
from sless.backends.local.logfiles import LogFiles
from sless.config import Settings
from sless.errors import NotFound, NotReady
from sless.models import FunctionSpec
from sless.sandbox import (
    EgressProxy,
    HostIds,
    TunnelCaps,
    Worker,
    default_runtimes_dir,
    start_worker,
)
from sless.store import LocalBlobStore

#: the namespace the function sees (``SLESS_NAMESPACE``) and its log and socket paths use
NAMESPACE = "sless-dev"


def dev_host_ids(settings: Settings) -> HostIds | None:
    """The uid a worker runs as when ``sless dev`` is root: the last one of the sandbox
    range (``SLESS_SANDBOX_UID_BASE`` + ``COUNT`` - 1), never root; None when not root
    (the worker then runs as the developer, as an unprivileged gateway's do)."""
    if os.geteuid() != 0:
        return None
    last = settings.sandbox.uid_base + settings.sandbox.uid_count - 1
    return HostIds(uid=last, gid=last)


class _Running:
    """One started worker, its client, its egress proxy and its calls' bound."""

    def __init__(self, spec: FunctionSpec, worker: Worker, proxy: EgressProxy | None) -> None:
        self.spec = spec
        self.worker = worker
        self.proxy = proxy
        self.client = Http1Client.unix(str(worker.socket_path), max_idle=spec.concurrency)
        #: the calls one instance serves at once (``concurrency``), as a pool admits them
        self.slots = asyncio.Semaphore(spec.concurrency)

    async def stop(self) -> None:
        await self.client.close()
        await self.worker.stop()
        if self.proxy is not None:
            await self.proxy.close()


class DevServing:
    """The ``Serving`` of one function: its current worker, replaced on every reload."""

    def __init__(self, settings: Settings, name: str) -> None:
        self.settings = settings
        self.name = name
        self.max_response_bytes = settings.gateway.max_response_bytes
        # short (Unix socket paths) and private: 0711, the worker's uid enters its own parts
        base = Path("/tmp") if os.geteuid() == 0 else Path(tempfile.gettempdir())  # noqa: S108
        self.root = Path(tempfile.mkdtemp(prefix="sless-dev-", dir=base))
        self.root.chmod(0o711)
        self.logs = LogFiles(
            self.root / "logs",
            max_bytes=settings.sandbox.log_max_bytes,
            tenant_max_bytes=settings.limits.max_log_bytes,
            rate=settings.sandbox.log_rate_bytes,
            burst=settings.sandbox.log_burst_bytes,
        )
        self.builder = Builder(
            self.root / "builds",
            LocalBlobStore(self.root / "blobs"),
            settings.build,
            settings.validation,
        )
        self.builder.start(self.root)
        # no secret store here: ``secret_env`` is never asked (see ``replace``)
        self.launcher = WorkerLauncher(settings, None, self.logs, default_runtimes_dir())  # type: ignore[arg-type]
        self.launcher.run_dir = self.root
        self.host_ids = dev_host_ids(settings)
        self.tunnel_caps = TunnelCaps(
            per_tenant=settings.sandbox.egress_tunnels_per_tenant,
            per_function=settings.sandbox.egress_tunnels_per_function,
        )
        self.current: _Running | None = None
        self._serial = 0

    @property
    def log_key(self) -> tuple[str, str]:
        return NAMESPACE, self.name

    @property
    def log_file(self) -> Path:
        return self.logs.path(NAMESPACE, self.name)

    async def replace(
        self, spec: FunctionSpec, archive: bytes, sha256: str, secret_env: dict[str, str]
    ) -> None:
        """Build ``archive`` and start a worker of it; it serves from now on, and the
        previous one stops. Raises (``BuildError``, ``UpstreamError``...) with the previous
        worker still serving."""
        await self.launcher.choose_isolation()
        await self.builder.blobs.put(sha256, archive)
        build = await self.builder.ensure_built(spec.runtime, sha256, self.host_ids)
        self._serial += 1
        proxy = None
        if spec.egress:
            proxy = EgressProxy(
                self.launcher.short_path(f"{self.name}/{self._serial}", "egress.sock"),
                spec.egress,
                name=f"{NAMESPACE}/{self.name}",
                # the caps the function meets deployed (one function: its own cap binds)
                caps=self.tunnel_caps,
                tenant=NAMESPACE,
                private_allowed=self.settings.egress.private_allowed,
            )
            await proxy.start()
            if self.host_ids is not None:
                os.chown(proxy.socket_path, 0, self.host_ids.gid)
                proxy.socket_path.chmod(0o660)
        sandbox_spec = self.launcher.sandbox_spec(
            NAMESPACE,
            self.name,
            spec,
            build,
            serial=self._serial,
            egress_socket=proxy.socket_path if proxy is not None else None,
            secret_env={k: SecretStr(v) for k, v in secret_env.items()},
            host_ids=self.host_ids,
        )
        sandbox = self.settings.sandbox
        try:
            worker = await start_worker(
                sandbox_spec,
                runtimes_dir=self.launcher.runtimes_dir,
                bwrap=sandbox.bwrap,
                unsafe_no_sandbox=sandbox.unsafe_no_sandbox,
                start_timeout_s=sandbox.start_timeout_s,
                seccomp=sandbox.seccomp,
                isolation=self.launcher.isolation,
            )
        except BaseException:
            if proxy is not None:
                await proxy.close()
            raise
        previous, self.current = self.current, _Running(spec, worker, proxy)
        if previous is not None:
            await previous.stop()

    async def close(self) -> None:
        if self.current is not None:
            await self.current.stop()
            self.current = None
        self.logs.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- Serving ---------------------------------------------------------------------

    def serving(self, namespace: str, name: str, version: str | None = None) -> FunctionSpec:
        if name != self.name:
            raise NotFound(f"function {name!r} not found: sless dev serves {self.name!r}")
        if self.current is None:
            raise NotReady(f"{self.name} is not running: see the reason above")
        return self.current.spec

    def http_disabled(self, namespace: str, name: str) -> bool:
        return False

    def instance_counts(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        return {}

    def lease_now(self, namespace: str, name: str, version: str | None = None) -> None:
        """Every call leases through ``upstream`` (``sless dev`` has no express path)."""
        return None

    @contextlib.asynccontextmanager
    async def upstream(
        self, namespace: str, name: str, version: str | None = None
    ) -> AsyncIterator[Upstream]:
        self.serving(namespace, name)
        running = self.current
        if running is None:
            raise NotReady(f"{self.name} is not running")
        async with running.slots:
            upstream = Upstream(
                client=running.client,
                ending=running.worker.ending,
                note=lambda line: self.logs.append(NAMESPACE, self.name, line),
            )
            yield upstream
            if upstream.timed_out or upstream.failed:
                # as a pool does: a worker that timed out or broke is not called again
                await self._respawn(running)

    async def prewarm(self, namespace: str, name: str, *, until: float) -> None:
        return None

    async def _respawn(self, running: _Running) -> None:
        if self.current is not running:
            return
        sandbox = self.settings.sandbox
        await running.client.close()
        await running.worker.stop()
        worker = await start_worker(
            running.worker.spec,
            runtimes_dir=self.launcher.runtimes_dir,
            bwrap=sandbox.bwrap,
            unsafe_no_sandbox=sandbox.unsafe_no_sandbox,
            start_timeout_s=sandbox.start_timeout_s,
            seccomp=sandbox.seccomp,
            isolation=self.launcher.isolation,
        )
        self.current = _Running(running.spec, worker, running.proxy)

"""Pre-started generic workers, specialized on a function's first call.

A cold start is mostly bubblewrap making its namespaces and the interpreter starting and
importing the runtime server (measured: 130-270 ms here, the handler's import a few ms).
This pool does that work ahead of time: it keeps ``size`` generic workers per runtime, each
a complete sandbox (the same ``build_command`` arguments as any worker) whose runtime
server waits on its socket for the one message that says which function to be. Fission's
pool manager does this with pods; this is the same one level down.

Specializing a worker, before any of the function's code runs in it:

1. the function's code and deps are hard-linked (copied when the file systems differ)
   into the worker's own, until then empty, directories that are bound read-only at
   ``/code`` and ``/deps``: the sandbox sees exactly what a directly started worker sees;
2. its cgroup becomes the one a directly started worker of the function would have: named
   after it (never onto another live group: ``Cgroup.assign``), with the function's memory
   and pids limits, in the tenant's cpu group;
3. the message carries the environment a directly started worker gets, the function's
   address-space limit (the runtime lowers its own RLIMIT_AS: it can never raise it
   again, it has no capabilities) and, as the only file descriptor, the function's log
   opened for appending, which becomes its stdout and stderr;
4. the runtime imports the handler and answers ``ok``; from then on it is that function's
   worker, and its socket serves that function only.

Isolation: a generic worker runs as one tenant's host uid (``SandboxSpec.host_ids``) and
is only handed to a spec of that uid (the pool is keyed by it: ``PrestartPool``). It has
run nothing but our runtime server, so no tenant state can
be in it; it is taken out of the pool exactly once and never returns to it (a specialized
worker stops like any other and is replaced by a new generic one); the directories it
was given are its own and are removed when it stops. A worker that fails any step is
stopped and the caller starts one directly. Only specs that differ from the pool's only in
what can be handed over qualify (``fits``): no network, no egress socket, no CPU-time limit,
and the pool's process, file and /tmp limits.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path

from sless.tasks import wait_for

from . import sockets
from .cgroups import DEFAULT_ROOT
from .commands import (
    CODE_MOUNT,
    DEPS_MOUNT,
    SOCKET_MOUNT,
    SOCKET_NAME,
    HostLayout,
    MiB,
    address_space_mb,
    worker_env,
)
from .gvisor import Gvisor
from .specs import HostIds, Limits, Runtime, SandboxSpec
from .workers import Worker, WorkerStartError, start_worker

log = logging.getLogger(__name__)

#: the runtimes whose server can be specialized (Node.js cannot receive the log's file
#: descriptor over a Unix socket, and its heap limit is a start-time flag)
PRESTARTABLE: tuple[Runtime, ...] = ("python3.11",)
_REPLY_BYTES = 4096


class SpecializeError(Exception):
    """The generic worker could not become the function's worker (it has been stopped)."""


Key = tuple[Runtime, HostIds | None]


class PrestartPool:
    """``size`` generic workers per runtime and per tenant uid, each handed out once.

    A generic worker runs as one tenant's host uid from its first instruction (a running
    process cannot be re-owned safely), so it may only become a worker of that tenant:
    the pool keeps workers per ``(runtime, host_ids)``. A tenant's workers are started
    once it is ``wanted`` (its first deploy or call) and kept for the ``tenants`` most
    recently wanted; the others' are stopped. Where the gateway cannot switch uid,
    ``host_ids`` is None for every spec and the pool is one shared set, as before."""

    def __init__(
        self,
        *,
        slots_dir: Path,
        sockets_dir: Path,
        size: int,
        limits: Limits,
        runtimes_dir: Path,
        bwrap: str = "bwrap",
        start_timeout_s: float = 20.0,
        runtimes: Sequence[Runtime] = PRESTARTABLE,
        host: HostLayout | None = None,
        cgroup_root: Path | None = None,
        refill_delay_s: float = 0.5,
        seccomp: bool = True,
        tenants: int = 16,
        isolation: Gvisor | None = None,
    ) -> None:
        #: code/deps directories of the workers: on the builds' file system, for hard links
        self.slots_dir = slots_dir
        #: socket directories: short paths (108 bytes at most for a Unix socket)
        self.sockets_dir = sockets_dir
        self.size = size
        self.limits = limits
        self.runtimes_dir = runtimes_dir
        self.bwrap = bwrap
        self.start_timeout_s = start_timeout_s
        self.runtimes = tuple(r for r in runtimes if r in PRESTARTABLE)
        self.host = host or HostLayout.discover()
        self.cgroup_root = cgroup_root or DEFAULT_ROOT
        #: seconds between handing a worker out and starting its replacement
        self.refill_delay_s = refill_delay_s
        #: the seccomp filter on the generic workers (off: a benchmark's comparison only)
        self.seccomp = seccomp
        #: gVisor instead of bubblewrap (``gvisor``)
        self.isolation = isolation
        #: how many tenants keep generic workers at once
        self.tenants = tenants
        #: the tenants that keep generic workers, least recently wanted first
        self._wanted: dict[HostIds | None, str] = {}
        self._ready: dict[Key, list[Worker]] = {}
        self._fillers: dict[Key, asyncio.Task[None]] = {}
        self._serial = 0
        self._closed = False
        self._changed = asyncio.Event()
        self._stopping: set[asyncio.Task[int]] = set()
        #: counters for tests and metrics
        self.started = 0
        self.handed_out = 0
        self.failed = 0

    # -- filling -------------------------------------------------------------------------

    def start(self, host_ids: HostIds | None = None) -> None:
        """Begin filling the pool for ``host_ids`` in the background (the caller does not
        wait); without ids: the workers of a gateway that cannot switch uid."""
        self.want(host_ids)

    def want(self, host_ids: HostIds | None, tenant: str = "") -> None:
        """Keep generic workers for ``host_ids`` (most recently wanted); stop those of the
        tenant wanted least recently beyond ``tenants``. ``tenant`` (the namespace those
        ids belong to) puts its generic workers in its cpu group from their start, so that
        specializing one moves no process between cgroups (``Cgroup.assign``)."""
        if self._closed or self.size <= 0:
            return
        known = self._wanted.pop(host_ids, "")
        self._wanted[host_ids] = tenant or known
        while len(self._wanted) > self.tenants:
            evicted = next(iter(self._wanted))
            del self._wanted[evicted]
            for runtime in self.runtimes:
                self._evict((runtime, evicted))
        for runtime in self.runtimes:
            self._refill((runtime, host_ids))

    def _evict(self, key: Key) -> None:
        task = self._fillers.pop(key, None)
        if task is not None:
            task.cancel()
        for worker in self._ready.pop(key, []):
            stopping = asyncio.create_task(worker.stop(grace_s=0))
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)

    def ready(self, runtime: Runtime, host_ids: HostIds | None = None) -> int:
        return sum(1 for w in self._ready.get((runtime, host_ids), []) if w.returncode is None)

    async def wait_filled(self, timeout_s: float = 60.0) -> None:
        """Until every wanted tenant has ``size`` generic workers per runtime ready (tests,
        benchmarks)."""
        async with asyncio.timeout(timeout_s):
            while any(
                self.ready(r, ids) < self.size for r in self.runtimes for ids in self._wanted
            ):
                self._changed.clear()
                await self._changed.wait()

    def _refill(self, key: Key, delay_s: float = 0.0) -> None:
        task = self._fillers.get(key)
        if self._closed or self.size <= 0 or key[1] not in self._wanted:
            return
        if task is not None and not task.done():
            return
        self._fillers[key] = asyncio.create_task(self._fill(key, delay_s), name="prestart")

    async def _fill(self, key: Key, delay_s: float = 0.0) -> None:
        # one start at a time, and not right after a worker was taken: a start costs
        # about 150 ms of CPU, which would otherwise compete with that worker's first call
        await asyncio.sleep(delay_s)
        failures = 0
        while not self._closed and key[1] in self._wanted and self.ready(*key) < self.size:
            ready = self._ready.setdefault(key, [])
            ready[:] = [w for w in ready if w.returncode is None]
            try:
                worker = await self._start_generic(*key)
            except (WorkerStartError, OSError) as e:
                failures += 1
                log.warning("pre-starting a %s worker failed: %s", key[0], e)
                await asyncio.sleep(min(30.0, 0.5 * 2**failures))
                continue
            if self._closed or key[1] not in self._wanted:
                await worker.stop(grace_s=0)
                return
            self._ready.setdefault(key, []).append(worker)
            self._changed.set()

    async def _start_generic(self, runtime: Runtime, host_ids: HostIds | None) -> Worker:
        self._serial += 1
        self.slots_dir.mkdir(parents=True, exist_ok=True)
        slot = Path(tempfile.mkdtemp(prefix=f"{runtime}-", dir=self.slots_dir))
        (slot / "code").mkdir(mode=0o755)
        (slot / "deps").mkdir(mode=0o755)
        if host_ids is not None and os.geteuid() == 0:
            # the tenant's own: readable by its gid only (its uid cannot write it)
            os.chown(slot, 0, host_ids.gid)
            os.chmod(slot, 0o750)  # noqa: S103 (group: the tenant only)
        sockets = self.sockets_dir / f"p{self._serial}"
        spec = SandboxSpec(
            name=f"prestart.{runtime}.{os.getpid()}.{self._serial}",
            runtime=runtime,
            code_dir=slot / "code",
            deps_dir=slot / "deps",
            entrypoint="handler.handle",
            env={},
            socket_dir=sockets,
            # only the runtime server's own output before it is specialized
            log_file=slot / "prestart.log",
            limits=self.limits,
            prestarted=True,
            host_ids=host_ids,
            namespace=self._wanted.get(host_ids, ""),
        )
        try:
            worker = await start_worker(
                spec,
                runtimes_dir=self.runtimes_dir,
                bwrap=self.bwrap,
                start_timeout_s=self.start_timeout_s,
                host=self.host,
                cgroup_root=self.cgroup_root,
                seccomp=self.seccomp,
                isolation=self.isolation,
            )
        except BaseException:
            shutil.rmtree(slot, ignore_errors=True)
            shutil.rmtree(sockets, ignore_errors=True)
            raise
        worker.owned_dirs += [slot, sockets]
        self.started += 1
        return worker

    # -- handing out ---------------------------------------------------------------------

    def fits(self, spec: SandboxSpec) -> bool:
        """Whether a generic worker can become ``spec``'s worker with nothing weakened."""
        pool = self.limits
        limits = spec.limits
        return (
            spec.runtime in self.runtimes
            and not spec.prestarted
            and not spec.network
            and spec.egress_socket is None
            and limits.cpu_seconds is None
            and limits.max_processes == pool.max_processes
            and limits.max_open_files == pool.max_open_files
            and limits.tmp_size_mb == pool.tmp_size_mb
        )

    async def take(self, spec: SandboxSpec) -> Worker | None:
        """A generic worker turned into ``spec``'s worker, or None (the pool is empty, the
        spec does not fit, or specializing failed): the caller then starts one directly."""
        if self._closed or not self.fits(spec):
            return None
        key = (spec.runtime, spec.host_ids)
        self.want(spec.host_ids, spec.namespace)  # most recently used: kept
        ready = self._ready.get(key, [])
        worker = None
        while ready and worker is None:
            candidate = ready.pop(0)
            # only a worker running as this spec's uid: never another tenant's
            if candidate.returncode is None and candidate.spec.host_ids == spec.host_ids:
                worker = candidate
        self._refill(key, self.refill_delay_s)
        if worker is None:
            return None
        try:
            await specialize(worker, spec, timeout_s=self.start_timeout_s)
        except SpecializeError as e:
            self.failed += 1
            log.warning("specializing a pre-started worker for %s failed: %s", spec.name, e)
            return None
        self.handed_out += 1
        return worker

    async def close(self) -> None:
        """Stop every generic worker, ready or being started. Cancelled half-way, it
        still stops the ready ones (a stop that is itself cancelled kills at once) and
        the cancellation goes on to the caller; a start it cancelled kills its own."""
        self._closed = True
        fillers = list(self._fillers.values())
        for task in fillers:
            task.cancel()
        try:
            if fillers:
                await asyncio.wait(fillers)
        finally:
            workers = [w for ready in self._ready.values() for w in ready]
            for ready in self._ready.values():
                ready.clear()
            await asyncio.gather(*(w.stop(grace_s=0) for w in workers), *self._stopping)


async def specialize(worker: Worker, spec: SandboxSpec, *, timeout_s: float) -> None:
    """Make the generic ``worker`` serve ``spec`` (see the module docstring).

    Raises ``SpecializeError`` after stopping the worker when any step fails."""
    generic = worker.spec
    try:
        # off the event loop: moving processes between cgroups waits for an RCU grace
        # period (10-15 ms measured here)
        await asyncio.to_thread(_hand_over, worker, spec, generic)
        env = worker_env(
            spec,
            code_dir=CODE_MOUNT,
            deps_dir=None if spec.deps_dir is None else DEPS_MOUNT,
            socket=f"{SOCKET_MOUNT}/{SOCKET_NAME}",
        )
        message = json.dumps({"env": env, "address_space": address_space_mb(spec) * MiB})
        reply = await wait_for(
            asyncio.to_thread(_send, worker.socket_path, message.encode(), spec),
            timeout_s,
        )
    except (OSError, TimeoutError, ValueError) as e:
        await worker.stop(grace_s=0)
        raise SpecializeError(f"{type(e).__name__}: {e}") from None
    except BaseException:
        # cancelled (the caller left) or failing otherwise: the worker was taken from the
        # pool and belongs to nobody now, so it is killed at once and cleaned up later
        worker.abandon()
        raise
    if reply.strip() != "ok":
        await worker.stop(grace_s=0)
        raise SpecializeError(reply.strip()[:500] or "the worker closed the connection")
    worker.name = spec.name


def _hand_over(worker: Worker, spec: SandboxSpec, generic: SandboxSpec) -> None:
    worker.assign(spec.name, spec.namespace, spec.limits)
    link_tree(spec.code_dir, generic.code_dir)
    if spec.deps_dir is not None and generic.deps_dir is not None:
        link_tree(spec.deps_dir, generic.deps_dir)


def link_tree(source: Path, target: Path) -> None:
    """Hard-link every file of ``source`` into the empty ``target`` (copy across devices).

    The links share the build's inodes; both are read-only inside the sandbox (bound
    read-only, the sandbox's root remounted read-only), so sharing them changes nothing."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                raise
            shutil.copy2(src, dst, follow_symlinks=False)

    shutil.copytree(source, target, symlinks=True, copy_function=link, dirs_exist_ok=True)


def _send(socket_path: Path, message: bytes, spec: SandboxSpec) -> str:
    log_fd = spec.open_log()
    try:
        with sockets.connect_blocking(socket_path) as conn:
            socket.send_fds(conn, [message[:1]], [log_fd])
            conn.sendall(message[1:])
            conn.shutdown(socket.SHUT_WR)
            reply = b""
            while len(reply) < _REPLY_BYTES and (chunk := conn.recv(_REPLY_BYTES)):
                reply += chunk
    finally:
        os.close(log_fd)
    return reply.decode(errors="replace")

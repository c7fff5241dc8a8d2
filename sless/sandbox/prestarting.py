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
   after it, with the function's memory and pids limits, in the tenant's cpu group;
3. the message carries the environment a directly started worker gets, the function's
   address-space limit (the runtime lowers its own RLIMIT_AS: it can never raise it
   again, it has no capabilities) and, as the only file descriptor, the function's log
   opened for appending, which becomes its stdout and stderr;
4. the runtime imports the handler and answers ``ok``; from then on it is that function's
   worker, and its socket serves that function only.

Isolation: a generic worker has run nothing but our runtime server, so no tenant state can
be in it; it is taken out of the pool exactly once and never returns to it (a specialized
worker stops like any other and is replaced by a new generic one); the directories it
was given are its own and are removed when it stops. A worker that fails any step is
stopped and the caller starts one directly. Only specs that differ from the pool's only in
what can be handed over qualify (``fits``): no network, no egress socket, no CPU-time limit,
and the pool's process, file and /tmp limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path

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
from .specs import Limits, Runtime, SandboxSpec
from .workers import Worker, WorkerStartError, start_worker

log = logging.getLogger(__name__)

#: the runtimes whose server can be specialized (Node.js cannot receive the log's file
#: descriptor over a Unix socket, and its heap limit is a start-time flag)
PRESTARTABLE: tuple[Runtime, ...] = ("python3.11",)
_REPLY_BYTES = 4096


class SpecializeError(Exception):
    """The generic worker could not become the function's worker (it has been stopped)."""


class PrestartPool:
    """``size`` generic workers per runtime, each handed out once."""

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
        self._ready: dict[Runtime, list[Worker]] = {r: [] for r in self.runtimes}
        self._fillers: dict[Runtime, asyncio.Task[None]] = {}
        self._serial = 0
        self._closed = False
        self._changed = asyncio.Event()
        #: counters for tests and metrics
        self.started = 0
        self.handed_out = 0
        self.failed = 0

    # -- filling -------------------------------------------------------------------------

    def start(self) -> None:
        """Begin filling the pool in the background (the caller does not wait)."""
        for runtime in self.runtimes:
            self._refill(runtime)

    def ready(self, runtime: Runtime) -> int:
        return sum(1 for w in self._ready.get(runtime, []) if w.returncode is None)

    async def wait_filled(self, timeout_s: float = 60.0) -> None:
        """Until every runtime has ``size`` generic workers ready (tests, benchmarks)."""
        async with asyncio.timeout(timeout_s):
            while any(self.ready(r) < self.size for r in self.runtimes):
                self._changed.clear()
                await self._changed.wait()

    def _refill(self, runtime: Runtime, delay_s: float = 0.0) -> None:
        task = self._fillers.get(runtime)
        if self._closed or self.size <= 0 or (task is not None and not task.done()):
            return
        self._fillers[runtime] = asyncio.create_task(
            self._fill(runtime, delay_s), name=f"prestart-{runtime}"
        )

    async def _fill(self, runtime: Runtime, delay_s: float = 0.0) -> None:
        # one start at a time, and not right after a worker was taken: a start costs
        # about 150 ms of CPU, which would otherwise compete with that worker's first call
        await asyncio.sleep(delay_s)
        failures = 0
        while not self._closed and self.ready(runtime) < self.size:
            self._ready[runtime] = [w for w in self._ready[runtime] if w.returncode is None]
            try:
                worker = await self._start_generic(runtime)
            except (WorkerStartError, OSError) as e:
                failures += 1
                log.warning("pre-starting a %s worker failed: %s", runtime, e)
                await asyncio.sleep(min(30.0, 0.5 * 2**failures))
                continue
            if self._closed:
                await worker.stop(grace_s=0)
                return
            self._ready[runtime].append(worker)
            self._changed.set()

    async def _start_generic(self, runtime: Runtime) -> Worker:
        self._serial += 1
        self.slots_dir.mkdir(parents=True, exist_ok=True)
        slot = Path(tempfile.mkdtemp(prefix=f"{runtime}-", dir=self.slots_dir))
        (slot / "code").mkdir()
        (slot / "deps").mkdir()
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
        ready = self._ready[spec.runtime]
        worker = None
        while ready and worker is None:
            candidate = ready.pop(0)
            if candidate.returncode is None:
                worker = candidate
        self._refill(spec.runtime, self.refill_delay_s)
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
        self._closed = True
        for task in self._fillers.values():
            task.cancel()
        for task in self._fillers.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        workers = [w for ready in self._ready.values() for w in ready]
        for ready in self._ready.values():
            ready.clear()
        await asyncio.gather(*(w.stop(grace_s=0) for w in workers))


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
        reply = await asyncio.wait_for(
            asyncio.to_thread(_send, worker.socket_path, message.encode(), spec.log_file),
            timeout_s,
        )
    except (OSError, TimeoutError, ValueError) as e:
        await worker.stop(grace_s=0)
        raise SpecializeError(f"{type(e).__name__}: {e}") from None
    if reply.strip() != "ok":
        await worker.stop(grace_s=0)
        raise SpecializeError(reply.strip()[:500] or "the worker closed the connection")
    worker.name = spec.name


def _hand_over(worker: Worker, spec: SandboxSpec, generic: SandboxSpec) -> None:
    worker.assign(spec.name, spec.namespace, spec.limits)
    _link_tree(spec.code_dir, generic.code_dir)
    if spec.deps_dir is not None and generic.deps_dir is not None:
        _link_tree(spec.deps_dir, generic.deps_dir)


def _link_tree(source: Path, target: Path) -> None:
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


def _send(socket_path: Path, message: bytes, log_file: Path) -> str:
    log_fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(socket_path))
            socket.send_fds(conn, [message[:1]], [log_fd])
            conn.sendall(message[1:])
            conn.shutdown(socket.SHUT_WR)
            reply = b""
            while len(reply) < _REPLY_BYTES and (chunk := conn.recv(_REPLY_BYTES)):
                reply += chunk
    finally:
        os.close(log_fd)
    return reply.decode(errors="replace")

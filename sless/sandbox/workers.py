"""Starting, watching and stopping sandboxed workers (the I/O half of the sandbox).

A worker is one bubblewrap process tree running one runtime server. Launch sequence:

1. the cgroup is created (when the host allows it), its cpu group inside the tenant's;
2. bubblewrap starts with its arguments read from a memfd (``--args``), so the function's
   environment never appears in the host's process list, with ``--block-fd`` so that
   nothing inside runs before step 3, ``--info-fd`` to learn the sandbox's first pid, and
   ``--seccomp`` with the filter (``seccomp``), which it installs before the first exec;
3. both bubblewrap processes are moved into the cgroup, then unblocked: every process of
   the worker, including tenant code run at import time, is counted from its first fork;
4. the worker is ready when its Unix socket accepts a connection (the runtime imports the
   handler before it binds the socket). If the process exits first, or the start timeout
   passes, ``WorkerStartError`` carries the last lines of the worker's log.

stdout and stderr go straight to the log file (opened in append mode by us): a chatty
function costs the gateway no memory and no copying.

Host identity: when the gateway runs as root, bubblewrap (or, with
``--unsafe-no-sandbox``, the interpreter) is started as the spec's ``host_ids``, the
tenant's own unprivileged uid and gid with no supplementary groups, and a spec without
them is refused (``_credentials``, through ``setpriv``): no path runs tenant code as host
root. A gateway that is not root cannot switch uid; its workers run as its own uid.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from sless.models.endings import Ending, of_wait_status
from sless.tasks import wait_for

from . import gvisor as gvisor_sandbox
from . import reaping, scheduling, sockets
from . import seccomp as seccomp_filter
from .cgroups import Cgroup
from .commands import HostLayout, LaunchCommand, build_command
from .gvisor import Gvisor
from .specs import Limits, SandboxSpec

_LOG_TAIL_BYTES = 4096
_LOG_TAIL_LINES = 20


class WorkerStartError(Exception):
    """The worker exited or did not become ready; the message ends with its last log lines.

    ``ending``: how it ended (None: it was still running, not ready in time)."""

    def __init__(self, message: str, *, ending: Ending | None = None) -> None:
        super().__init__(message)
        self.ending = ending


def default_runtimes_dir() -> Path:
    """The ``runtimes/`` directory of a source checkout (next to the ``sless`` package)."""
    return Path(__file__).resolve().parents[2] / "runtimes"


def _log_tail(spec: SandboxSpec) -> str:
    try:
        if spec.log_sink is not None:
            spec.log_sink.flush()
        with spec.log_file.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _LOG_TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    lines = data.decode("utf-8", errors="replace").splitlines()[-_LOG_TAIL_LINES:]
    return "\n".join(lines)


class Worker:
    """A running sandboxed runtime server."""

    def __init__(
        self,
        spec: SandboxSpec,
        process: asyncio.subprocess.Process,
        cgroup: Cgroup | None,
        cgroup_reason: str,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.pid = process.pid
        self.socket_path = spec.socket_path
        self.started_at = time.time()
        self.cgroup_reason = cgroup_reason
        #: the limits it runs under (a pre-started worker's change when it is specialized)
        self.limits = spec.limits
        #: inside bubblewrap (False: the development-only unsandboxed mode)
        self.sandboxed = True
        #: under gVisor: its host cgroup also holds the Sentry (``gvisor.host_limits``)
        self.gvisor = False
        self._process = process
        self._cgroup = cgroup
        #: host directories removed when the worker stops (a pre-started worker's own)
        self.owned_dirs: list[Path] = []

    def __repr__(self) -> str:
        return f"Worker(name={self.name!r}, pid={self.pid}, returncode={self.returncode})"

    @property
    def returncode(self) -> int | None:
        """None while running; the exit status (negative: killed by that signal) after."""
        return self._process.returncode

    @property
    def cgroup_limited(self) -> bool:
        return self._cgroup is not None

    @property
    def cgroup_dirs(self) -> dict[str, Path]:
        """Its groups by controller: its own, not necessarily named after it (``cgroups``)."""
        return {} if self._cgroup is None else dict(self._cgroup.dirs)

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer hit the worker (needs cgroup limits)."""
        return self._cgroup is not None and self._cgroup.oom_killed()

    def assign(self, name: str, tenant: str, limits: Limits) -> None:
        """Make the worker's cgroup that of worker ``name`` of ``tenant`` under ``limits``
        (see ``Cgroup.assign``); without a cgroup there is nothing to move."""
        if self._cgroup is not None:
            host = gvisor_sandbox.host_limits(limits) if self.gvisor else limits
            self._cgroup.assign(name, tenant, host)
        self.limits = limits

    def ended(self) -> Ending | None:
        """How the worker ended (its wait status, its cgroup's OOM kills and refused
        forks); None while it runs. ``sless.models.endings`` words it for the tenant."""
        code = self._process.returncode
        if code is None:
            return None
        status, killed = of_wait_status(code, sandboxed=self.sandboxed)
        refused = self._cgroup is not None and self._cgroup.fork_refusals() > 0
        return Ending(
            status=status,
            signal=killed,
            oom_killed=self.oom_killed(),
            memory_mb=self.limits.memory_mb,
            process_limit=self.limits.max_processes if refused else None,
            cpu_seconds=self.limits.cpu_seconds,
            file_size_mb=self.limits.tmp_size_mb,
        )

    async def ending(self, wait_s: float = 1.0) -> Ending | None:
        """``ended`` after waiting up to ``wait_s`` for the worker to exit: a call's
        connection breaks a moment before bubblewrap reports its child's death."""
        if self._process.returncode is None:
            with contextlib.suppress(TimeoutError):
                await wait_for(asyncio.shield(self._process.wait()), wait_s)
        return self.ended()

    def pids(self) -> set[int]:
        """Host pids of the worker's processes (from the cgroup; empty without one)."""
        return set() if self._cgroup is None else self._cgroup.pids()

    async def wait(self) -> int:
        return await self._process.wait()

    def kill(self) -> None:
        """SIGKILL the whole worker now. bubblewrap's death takes the sandbox's pid 1 with
        it (``--die-with-parent``), and with it every process of the pid namespace."""
        reaping.kill_group(self._process)
        if self._cgroup is not None:
            self._cgroup.kill_all()

    async def stop(self, grace_s: float = 2.0) -> int:
        """SIGTERM, then SIGKILL after ``grace_s``; removes the cgroup and the socket.

        Cancelled (or failing) half-way, it kills the worker at once, before anything
        else can be awaited, and finishes the cleanup in the background."""
        try:
            return await self._stop(grace_s)
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        """Kill the worker now and finish its cleanup in the background: for a caller that
        is being cancelled, and must not await before the kill."""
        self.kill()
        reaping.finish_in_background(self._stop(0))

    async def _stop(self, grace_s: float) -> int:
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await wait_for(self._process.wait(), grace_s)
        if self._process.returncode is None or self._cgroup is not None:
            await asyncio.to_thread(self.kill)
        code = await self._process.wait()
        if self._cgroup is not None:
            await asyncio.to_thread(self._cgroup.remove)
        with contextlib.suppress(OSError):
            self.socket_path.unlink()
        for directory in self.owned_dirs:
            await asyncio.to_thread(shutil.rmtree, directory, True)
        return code


def _credentials(spec: SandboxSpec) -> list[str]:
    """The ``setpriv`` prefix that makes the worker's process the tenant's host ids (real,
    effective and saved uid and gid, no supplementary groups, hence no capabilities)
    before it executes anything, when this process is root; refused without ids. Not
    ``Popen(user=...)``: uvloop's subprocesses do not take it."""
    if os.geteuid() != 0:
        return []
    if spec.host_ids is None:
        raise WorkerStartError(
            f"worker {spec.name}: refusing to run tenant code as host root (no host uid)"
        )
    ids = spec.host_ids
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={ids.uid}", f"--regid={ids.gid}", "--clear-groups", "--"]


def prepare_socket_dir(spec: SandboxSpec) -> None:
    """The socket directory, writable by the worker's uid only (it is bound read-write)."""
    spec.socket_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0 and spec.host_ids is not None:
        os.chown(spec.socket_dir, spec.host_ids.uid, spec.host_ids.gid)
    spec.socket_dir.chmod(0o700)


async def _spawn_unsandboxed(
    spec: SandboxSpec,
    command: LaunchCommand,
    credentials: list[str],
    cgroup: Cgroup | None,
    stdout: int,
    stderr: int,
) -> asyncio.subprocess.Process:
    """``--unsafe-no-sandbox`` (development only): the interpreter as a plain process, as
    the tenant's uid when the gateway is root."""
    process = await asyncio.create_subprocess_exec(
        *credentials,
        *command.argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        env=dict(command.env),
        cwd=spec.code_dir,
        start_new_session=True,
    )
    if cgroup is not None:
        # no way to block an unsandboxed interpreter before it starts: this races with
        # its first forks, acceptable for the development-only mode
        with contextlib.suppress(OSError):
            cgroup.add(process.pid)
    scheduling.as_batch(process.pid)  # the same race
    return process


async def _spawn(
    spec: SandboxSpec,
    command: LaunchCommand,
    *,
    unsafe_no_sandbox: bool,
    cgroup: Cgroup | None,
    stdout: int,
    stderr: int,
    seccomp: bool,
    gvisor: tuple[Gvisor, HostLayout, Path, bool] | None = None,
    owned: list[Path] | None = None,
) -> asyncio.subprocess.Process:
    """Start ``command`` with the worker already inside ``cgroup`` before its code runs,
    under the seccomp filter unless ``seccomp`` is false (a benchmark's comparison only).
    ``gvisor``: run it under gVisor instead (``gvisor`` module), its bundle added to
    ``owned``."""
    credentials = _credentials(spec)
    if unsafe_no_sandbox:
        return await _spawn_unsandboxed(spec, command, credentials, cgroup, stdout, stderr)
    if gvisor is not None:
        process, bundle = await gvisor_sandbox.spawn(
            *gvisor, spec, credentials=credentials, cgroup=cgroup, stdout=stdout, stderr=stderr
        )
        if owned is not None:
            owned.append(bundle)
        return process

    try:
        filter_fds = [seccomp_filter.program_fd()] if seccomp else []
    except seccomp_filter.SeccompUnavailable as e:
        raise WorkerStartError(str(e)) from None
    args_fd = os.memfd_create("sless-bwrap-args", os.MFD_CLOEXEC)
    block_r, block_w = os.pipe()
    info_r, info_w = os.pipe()
    try:
        # bubblewrap options (with the --setenv values) go through the memfd; the command
        # after "--" must stay on the command line
        split = command.argv.index("--")
        bwrap, options, inner = command.argv[0], command.argv[1:split], command.argv[split:]
        options = ("--block-fd", str(block_r), "--info-fd", str(info_w), *options)
        options = (*(a for fd in filter_fds for a in ("--seccomp", str(fd))), *options)
        os.write(args_fd, b"".join(a.encode() + b"\0" for a in options))
        os.lseek(args_fd, 0, os.SEEK_SET)
        argv = [*credentials, bwrap, "--args", str(args_fd), *inner]
        fds = (args_fd, block_r, info_w, *filter_fds)
        process = await reaping.spawned(_exec(argv, fds, stdout, stderr))
    except BaseException:
        # no process to hand on (it failed to start, or was killed: ``spawned``)
        os.close(block_w)
        os.close(info_r)
        raise
    finally:
        for fd in (args_fd, block_r, info_w, *filter_fds):
            os.close(fd)
    try:
        info = await _bubblewrap_info(info_r)
        child = json.loads(info or "{}").get("child-pid")
        children = (child,) if isinstance(child, int) else ()
        if cgroup is not None:
            _join(cgroup, process.pid, children)
        scheduling.as_batch(process.pid, *children)
    except BaseException:
        # its sandbox still waits on --block-fd, inside bubblewrap's process group: killed
        # with it before it could run (``reaping``), then the failure goes on
        reaping.kill_group(process)
        os.close(block_w)
        await reaping.reap(process)
        raise
    with contextlib.suppress(OSError):  # bubblewrap may have failed: its log says why
        os.write(block_w, b"1")
    os.close(block_w)
    return process


def _exec(
    argv: list[str], fds: tuple[int, ...], stdout: int, stderr: int
) -> Coroutine[Any, Any, asyncio.subprocess.Process]:
    """bubblewrap's start: no environment, its own session, ``fds`` passed on."""
    return asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        env={},
        cwd="/",
        start_new_session=True,
        pass_fds=fds,
    )


async def _bubblewrap_info(info_r: int) -> str:
    """What bubblewrap writes to ``--info-fd`` (10 s at most). The reading thread owns
    ``info_r``: it is closed once that thread is done, never under it (a closed number is
    soon another file's), even when this wait was cancelled."""
    reading = asyncio.ensure_future(asyncio.to_thread(_read_all, info_r))
    reading.add_done_callback(lambda _: os.close(info_r))
    return await wait_for(asyncio.shield(reading), 10)


def _join(cgroup: Cgroup, pid: int, children: tuple[int, ...]) -> None:
    """Move bubblewrap (``pid``) and its child (from its ``--info-fd``) into ``cgroup``."""
    # bubblewrap may already have failed (its log says why): the caller sees it exit
    with contextlib.suppress(ProcessLookupError):
        cgroup.add(pid)
    for child in children:
        # a child that is gone needs no limit; one the cgroup refused would run without
        # its memory and pids limits, so the start fails instead (the caller kills it)
        with contextlib.suppress(ProcessLookupError):
            cgroup.add(child)


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


async def launch(
    spec: SandboxSpec,
    command: LaunchCommand,
    *,
    group: str,
    stdout: int | None,
    unsafe_no_sandbox: bool,
    cgroup_root: Path | None,
    seccomp: bool,
    gvisor: tuple[Gvisor, HostLayout, Path, bool] | None,
) -> tuple[Worker, asyncio.subprocess.Process]:
    """Start ``command`` in a new cgroup named after ``group`` (stdout to the log unless
    given); returns the ``Worker``, which owns the process from then on, and the process.
    Until then ``_spawn`` owns it: a failure or a cancellation kills what it started
    (``reaping``), and this removes the cgroup and the directories made for it."""
    owned: list[Path] = []
    limits = spec.limits if gvisor is None else gvisor_sandbox.host_limits(spec.limits)
    cgroup, reason = Cgroup.create(group, limits, cgroup_root, tenant=spec.namespace)
    log_fd = spec.open_log()
    try:
        process = await _spawn(
            spec,
            command,
            unsafe_no_sandbox=unsafe_no_sandbox,
            cgroup=cgroup,
            stdout=log_fd if stdout is None else stdout,
            stderr=log_fd,
            seccomp=seccomp,
            gvisor=gvisor,
            owned=owned,
        )
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        for directory in owned:
            shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        os.close(log_fd)
    reaping.track(process)  # reaped before the loop closes (``reaping.settle_processes``)
    worker = Worker(spec, process, cgroup, reason)
    worker.sandboxed = not unsafe_no_sandbox
    worker.gvisor = gvisor is not None
    worker.owned_dirs += owned
    return worker, process


async def start_worker(
    spec: SandboxSpec,
    *,
    runtimes_dir: Path,
    bwrap: str = "bwrap",
    unsafe_no_sandbox: bool = False,
    start_timeout_s: float = 20.0,
    host: HostLayout | None = None,
    cgroup_root: Path | None = None,
    seccomp: bool = True,
    isolation: Gvisor | None = None,
) -> Worker:
    """Launch a worker and return once its socket accepts connections.

    Raises ``WorkerStartError`` (with the worker's last log lines) if it exits or is not
    ready within ``start_timeout_s``; the worker is then killed and cleaned up.
    """
    host = host or HostLayout.discover()
    command = build_command(
        spec, runtimes_dir=runtimes_dir, bwrap=bwrap, unsafe_no_sandbox=unsafe_no_sandbox, host=host
    )
    prepare_socket_dir(spec)
    with contextlib.suppress(FileNotFoundError):
        spec.socket_path.unlink()
    worker, process = await launch(
        spec,
        command,
        group=spec.name,
        stdout=None,
        unsafe_no_sandbox=unsafe_no_sandbox,
        cgroup_root=cgroup_root,
        seccomp=seccomp,
        gvisor=None if isolation is None else (isolation, host, runtimes_dir, False),
    )
    deadline = time.monotonic() + start_timeout_s
    delay = 0.002
    try:
        while True:
            if process.returncode is not None:
                raise WorkerStartError(
                    f"worker {spec.name} exited with status {process.returncode} before it "
                    f"was ready\n{_log_tail(spec)}".rstrip(),
                    ending=worker.ended(),
                )
            if spec.socket_path.exists() and await sockets.accepts(spec.socket_path):
                return worker
            if time.monotonic() > deadline:
                raise WorkerStartError(
                    f"worker {spec.name} was not ready within {start_timeout_s:g}s\n"
                    f"{_log_tail(spec)}".rstrip()
                )
            # the process's exit wakes us early; otherwise poll with a short backoff
            with contextlib.suppress(TimeoutError):
                await wait_for(asyncio.shield(process.wait()), delay)
            delay = min(delay * 2, 0.05)
    except BaseException:
        await worker.stop(grace_s=0)
        raise

"""No worker process outlives the code that started it, however that code ends.

Found in a production-like run: after a gateway stopped, a pre-started worker's bubblewrap
child lived on for 82 minutes as the tenant's uid, parent init, blocked in
``eventfd_read``, in the root memory cgroup (outside every sandbox limit). The pool's
filler had been cancelled while it waited for bubblewrap's ``--info-fd``: the start gave
up before the process was anybody's to kill. Each test here stops a start (or a stop) at
such a point and then looks for any process of the tenant's uid: every worker of these
tests runs as a uid of its own, so a survivor is exactly what leaked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sless.sandbox import HostIds, Limits, PrestartPool
from sless.sandbox import workers as workers_module
from sless.sandbox.cgroups import Cgroup
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    alive,
    groups_named,
    launch,
    make_spec,
    require_sandbox,
    searchable,
)

pytestmark = pytest.mark.integration

#: tenant uids of these tests only (the default range, away from the harness's tenants)
_ORPHAN_IDS = iter(HostIds(uid=u, gid=u) for u in range(100_061_001, 100_061_100))


def _processes_of(uid: int, sessions: set[int]) -> list[int]:
    """Live (not zombie) host processes whose real uid is ``uid`` or that belong to one of
    ``sessions`` (a worker's first process, still root in ``setpriv``, has no uid yet)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        uids = [line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")]
        session = int(stat.rpartition(")")[2].split()[3])
        if (uids[0][:1] == [str(uid)] or session in sessions) and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


class Tenant:
    """A tenant uid of its own, and the sessions of the processes started for it."""

    def __init__(self, ids: HostIds) -> None:
        self.ids = ids
        self.sessions: set[int] = set()

    def processes(self) -> list[int]:
        return _processes_of(self.ids.uid, self.sessions)

    async def survivors(self, within_s: float = 5.0) -> list[int]:
        """Its processes still alive after ``within_s``; returns early once none has been
        seen for half a second (a process being cloned can be missed by one scan)."""
        deadline = time.monotonic() + within_s
        quiet_since = None
        while time.monotonic() < deadline:
            if self.processes():
                quiet_since = None
            elif quiet_since is None:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= 0.5:
                return []
            await asyncio.sleep(0.05)
        return self.processes()


@pytest.fixture
def tenant(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tenant]:
    """A tenant of its own; whatever of it survives the test is killed afterwards (a
    failing run must not leave orphans on the machine)."""
    require_sandbox()
    tenant = Tenant(next(_ORPHAN_IDS))
    spawn = asyncio.create_subprocess_exec

    async def recorded(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await spawn(*args, **kwargs)
        tenant.sessions.add(process.pid)  # start_new_session: its session id is its pid
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recorded)
    yield tenant
    for pid in tenant.processes():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _hold_info_read(
    monkeypatch: pytest.MonkeyPatch, *, reported: bool
) -> tuple[threading.Event, threading.Event]:
    """Hold every start at the point where it waits for bubblewrap's ``--info-fd``: the
    process exists, it is in no cgroup yet. ``reported``: hold it once bubblewrap has
    written its info (its sandbox then waits on ``--block-fd``); else at once (it may not
    have written it yet). Returns (reached, release)."""
    reached, released = threading.Event(), threading.Event()
    real = workers_module._read_all

    def held(fd: int) -> str:
        if reported:
            select.select([fd], [], [], 10)
        reached.set()
        released.wait(10)
        return real(fd)

    monkeypatch.setattr(workers_module, "_read_all", held)
    return reached, released


@pytest.fixture(params=["at once", "once bubblewrap reported"])
def held_info_read(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[threading.Event, Callable[[], None]]]:
    reached, released = _hold_info_read(monkeypatch, reported=request.param != "at once")
    yield reached, released.set
    released.set()


@pytest.fixture
def held_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[threading.Event, Callable[[], None]]]:
    """Every start held as soon as its process exists (the moment the defect was seen)."""
    reached, released = _hold_info_read(monkeypatch, reported=False)
    yield reached, released.set
    released.set()


def _prestart_pool(tmp_path: Path, size: int) -> PrestartPool:
    """A pool of ``size`` pre-started workers in ``tmp_path``, not started."""
    searchable(tmp_path)
    return PrestartPool(
        slots_dir=tmp_path / "slots",
        sockets_dir=tmp_path / "s",
        size=size,
        limits=Limits(memory_mb=128, max_processes=32, max_open_files=128, tmp_size_mb=8),
        runtimes_dir=RUNTIMES_DIR,
    )


async def _cancelled_at(task: asyncio.Task[object], reached: threading.Event) -> None:
    if not await asyncio.to_thread(reached.wait, 10):
        raise AssertionError("the start never reached bubblewrap's info")
    # the start is now waiting for bubblewrap's info: its processes exist
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_start_cancelled_while_bubblewrap_reports_leaves_no_process(
    tmp_path: Path,
    tenant: Tenant,
    held_info_read: tuple[threading.Event, Callable[[], None]],
) -> None:
    reached, release = held_info_read
    spec = make_spec(tmp_path, host_ids=tenant.ids)
    start = asyncio.create_task(launch(spec))
    try:
        await _cancelled_at(start, reached)  # type: ignore[arg-type]
    finally:
        release()
    assert await tenant.survivors() == []
    assert not groups_named(spec.name)


async def test_a_start_that_fails_to_join_its_cgroup_leaves_no_process(
    tmp_path: Path, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(self: Cgroup, pid: int) -> None:
        raise OSError(28, "No space left on device")  # what a full pids.max says

    monkeypatch.setattr(Cgroup, "add", refused)
    spec = make_spec(tmp_path, host_ids=tenant.ids)
    with pytest.raises(OSError, match="No space left"):
        await launch(spec)
    assert await tenant.survivors() == []
    assert not groups_named(spec.name)


async def test_closing_the_pool_while_it_starts_a_worker_leaves_no_process(
    tmp_path: Path,
    tenant: Tenant,
    held_at_once: tuple[threading.Event, Callable[[], None]],
) -> None:
    reached, release = held_at_once
    pool = _prestart_pool(tmp_path, size=1)
    pool.start(tenant.ids)
    try:
        if not await asyncio.to_thread(reached.wait, 10):
            raise AssertionError("the pool never started a worker")
        await pool.close()  # what the gateway's shutdown does
    finally:
        release()
    assert await tenant.survivors() == []
    assert not list((tmp_path / "slots").iterdir())


async def test_a_stop_cancelled_half_way_still_ends_the_worker_and_removes_its_cgroup(
    tmp_path: Path, tenant: Tenant
) -> None:
    worker = await launch(make_spec(tmp_path, host_ids=tenant.ids))
    dirs = worker.cgroup_dirs
    assert dirs, worker.cgroup_reason
    stop = asyncio.create_task(worker.stop(grace_s=5))
    await asyncio.sleep(0)  # SIGTERM sent; now waiting for the exit
    stop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stop
    assert await tenant.survivors() == []
    deadline = time.monotonic() + 5
    while [d for d in dirs.values() if d.exists()] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not [d for d in dirs.values() if d.exists()]


async def test_a_child_the_cgroup_refuses_fails_the_start_and_leaves_no_process(
    tmp_path: Path, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bubblewrap joins its cgroup, its child (the sandbox) is refused: the sandbox would
    run without its memory and pids limits, so the start fails and kills it."""
    real = Cgroup.add
    calls: list[int] = []

    def refuses_the_child(self: Cgroup, pid: int) -> None:
        calls.append(pid)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        real(self, pid)

    monkeypatch.setattr(Cgroup, "add", refuses_the_child)
    spec = make_spec(tmp_path, host_ids=tenant.ids)
    with pytest.raises(OSError, match="No space left"):
        await launch(spec)
    assert len(calls) == 2  # bubblewrap, then its child
    assert await tenant.survivors() == []
    assert not groups_named(spec.name)


async def test_a_take_cancelled_while_specializing_leaves_no_process(
    tmp_path: Path, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that leaves while its pre-started worker is being specialized: the worker
    is out of the pool and nobody's, so it must not live on."""
    from sless.sandbox import prestarting

    pool = _prestart_pool(tmp_path, size=1)
    pool.start(tenant.ids)
    try:
        await pool.wait_filled(timeout_s=30)
        reached, released = threading.Event(), threading.Event()

        def held(*args: Any) -> str:
            reached.set()
            released.wait(10)
            raise OSError("released")

        monkeypatch.setattr(prestarting, "_send", held)
        pool.size = 0  # no refill: the only process of this tenant is the one taken
        spec = make_spec(tmp_path / "fn", limits=pool.limits, host_ids=tenant.ids)
        take = asyncio.create_task(pool.take(spec))
        try:
            await _cancelled_at(take, reached)  # type: ignore[arg-type]
        finally:
            released.set()
        assert await tenant.survivors() == []
    finally:
        await pool.close()


async def test_a_start_cancelled_while_its_process_is_being_made_leaves_no_process(
    tmp_path: Path, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled inside ``create_subprocess_exec``, after the fork: the event loop would
    kill bubblewrap alone, and its child would wait on a ``--block-fd`` nobody closes."""
    made = asyncio.Event()
    recorded = asyncio.create_subprocess_exec  # the tenant fixture's, which records sessions

    async def slow_to_return(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await recorded(*args, **kwargs)
        made.set()
        await asyncio.sleep(0.5)  # the process exists; the caller has not got it yet
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", slow_to_return)
    spec = make_spec(tmp_path, host_ids=tenant.ids)
    start = asyncio.create_task(launch(spec))
    await asyncio.wait_for(made.wait(), 10)
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    assert await tenant.survivors() == []
    assert not groups_named(spec.name)


async def test_closing_the_pool_cancelled_half_way_is_cancelled_and_leaves_no_process(
    tmp_path: Path, tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shutdown that gives up on ``close`` (a timeout around it) must see its
    cancellation, and the ready workers and the one being started must still end."""
    real = workers_module._read_all
    reached, released = threading.Event(), threading.Event()
    starts = 0

    def second_held(fd: int) -> str:
        nonlocal starts
        starts += 1
        if starts > 1:  # the first worker gets ready; the second start is held
            reached.set()
            released.wait(10)
        return real(fd)

    monkeypatch.setattr(workers_module, "_read_all", second_held)
    pool = _prestart_pool(tmp_path, size=2)
    pool.start(tenant.ids)
    try:
        if not await asyncio.to_thread(reached.wait, 20):
            raise AssertionError("the pool never started its second worker")
        assert pool.ready("python3.11", tenant.ids) == 1
        close = asyncio.create_task(pool.close())
        await asyncio.sleep(0)  # close has cancelled the start and waits for it to end
        assert not close.done()
        close.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(close, 5)
    finally:
        released.set()
    assert await tenant.survivors() == []

"""The platform's stop leaves no process of its loop behind, running or unreaped.

Seen once in a loaded CI run: at the end of a gateway test, uvicorn's loop closed while
a worker's process transport was still open ("unclosed transport", then "Event loop is
closed" in the process's exit callback), and pytest failed a later test's set-up with the
unraisable warning. On uvloop a child process is reaped by the loop that started it, so a
process its loop has not seen exit stays a child of this process; that is what these
tests look for after the loop has closed, on uvloop as under uvicorn.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import uvloop

from sless.config import Settings
from sless.gateway.platform import Platform
from sless.sandbox import reachable_by_others, reaping
from sless.tasks import wait_for
from tests.integration.sandbox.harness import launch, make_spec, require_sandbox

pytestmark = pytest.mark.integration


def _children() -> set[int]:
    """This process's child processes, running or not yet reaped."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError):
            found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


def _on_uvloop(scenario: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run ``scenario`` on a uvloop of its own in a thread (as uvicorn runs the gateway);
    returns what it returns once that loop has closed."""
    result: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                result.append(runner.run(scenario()))
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(120)
    if errors:
        raise errors[0]
    return result[0]


@pytest.fixture
def leftovers() -> Callable[[int], list[int]]:
    """``leftovers(pid)``: whether ``pid`` is still this process's child (then killed and
    reaped here: a failing run must not leave it)."""
    found: list[int] = []

    def check(pid: int) -> list[int]:
        if pid in _children():
            found.append(pid)
        return list(found)

    yield check
    for pid in found:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def test_a_worker_nobody_stopped_is_reaped_when_the_platform_stops(
    settings: Settings, database_url: str, tmp_path: Path, leftovers: Callable[[int], list[int]]
) -> None:
    # a worker whose owner went away without stopping it (as a pool's start that ended
    # after the pool closed did): the platform's stop still ends it and sees it exit
    require_sandbox()

    async def scenario() -> int:
        platform = await Platform.start(settings, database_url)
        try:
            worker = await launch(make_spec(tmp_path / "w"))
        finally:
            await platform.stop()
        return worker.pid

    pid = _on_uvloop(scenario)
    assert leftovers(pid) == []


def test_a_cancelled_stop_finishes_before_the_platform_stops(
    settings: Settings, database_url: str, tmp_path: Path, leftovers: Callable[[int], list[int]]
) -> None:
    # a worker's stop cancelled half-way (a call that left while its worker was being
    # specialized) kills it at once and reaps it in the background: the platform's stop
    # waits for that, bounded
    require_sandbox()

    async def scenario() -> int:
        platform = await Platform.start(settings, database_url)
        try:
            worker = await launch(make_spec(tmp_path / "w"))
            stopping = asyncio.create_task(worker.stop())
            await asyncio.sleep(0)
            stopping.cancel()
            with pytest.raises(asyncio.CancelledError):
                await stopping
            assert any(not t.done() for t in reaping._finishing)
        finally:
            await platform.stop()
        assert all(t.done() for t in reaping._finishing)
        return worker.pid

    pid = _on_uvloop(scenario)
    assert leftovers(pid) == []


def test_a_platform_stopped_just_after_it_started_stops(
    settings: Settings, database_url: str
) -> None:
    # its pollers are woken by the start and cancelled by the stop in the same turn: on
    # Python 3.11, asyncio.wait_for lost that cancellation, the poller went round again,
    # and the stop waited for it forever (sless.tasks.wait_for)
    async def scenario() -> int:
        platform = await Platform.start(settings, database_url)
        await wait_for(platform.stop(), 30)
        return 0

    assert _on_uvloop(scenario) == 0


def test_the_run_directory_a_killed_gateway_left_is_removed_at_the_next_start(
    settings: Settings, database_url: str, tmp_path: Path
) -> None:
    # a gateway killed with SIGKILL cannot remove its run directory (the workers' socket
    # directories, with whatever handlers wrote there); the next start does, and leaves
    # alone the directory of a gateway that still runs
    require_sandbox()
    base = Path(tempfile.gettempdir())
    if os.geteuid() == 0 and not reachable_by_others(base):
        base = Path("/tmp")  # where the platform puts it then
    killed = _a_gateway_holding_a_run_directory(base)
    running = _a_gateway_holding_a_run_directory(base)
    try:
        left, kept = Path(killed.stdout.readline().strip()), Path(running.stdout.readline().strip())
        killed.kill()
        killed.wait()
        assert (left / "worker.sock").exists()

        async def scenario() -> int:
            platform = await Platform.start(settings, database_url)
            await platform.stop()
            return 0

        _on_uvloop(scenario)
        assert not left.exists()
        assert (kept / "worker.sock").exists()
    finally:
        for process in (killed, running):
            process.kill()
            process.wait()
            process.stdout.close()


def _a_gateway_holding_a_run_directory(base: Path) -> subprocess.Popen[str]:
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from sless.backends.local.rundirs import RunDir\n"
        "run = RunDir.make(Path(sys.argv[1]))\n"
        "(run.path / 'worker.sock').touch()\n"
        "print(run.path, flush=True)\n"
        "time.sleep(600)\n"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, str(base)], stdout=subprocess.PIPE, text=True
    )

"""Killing a worker's processes for certain, however the code that started them ends.

A process the platform started and nobody owns any more runs as the tenant's uid under
whatever limits it had reached, and before a worker joins its cgroup that is none. Seen
in a production-like run: a pre-started worker's bubblewrap child, parent init, blocked
in ``eventfd_read`` in the root memory cgroup, 82 minutes after its gateway stopped. The
start had been cancelled while it waited for bubblewrap's ``--info-fd``: the pipe was
closed, bubblewrap died of SIGPIPE writing to it, and its child (about to become the
sandbox's pid 1) waited for it forever. In the other order the start unblocked a sandbox
that ran outside its cgroup with nobody holding its process object.

So whatever holds a worker's process object kills it on every way out that does not hand
it on: ``kill_group`` at once (synchronous: a cancelled coroutine must not await before
the kill), then ``reap`` for a bounded time. The process group is enough until the worker
is unblocked: its first process leads a session of its own (``start_new_session``), and
bubblewrap's child stays in it until ``--new-session``, which comes after ``--block-fd``
(as gVisor's runsc is only exec'd once unblocked). After that the sandbox is in its
cgroup and dies with bubblewrap (``--die-with-parent`` on its pid 1, whose death ends the
pid namespace); ``Worker.kill`` also kills what is left in the cgroup.

Whoever stops the platform then calls ``settle_processes``: until a process's exit has been seen on
its event loop, the loop holds a transport for it, and a loop closed with one open warns
"unclosed transport" and fails the process's exit callback ("Event loop is closed"). Seen
once in a loaded CI run, at the end of a gateway test. So the cleanups left in the
background are awaited, and every worker process started on the loop is killed if still
running and waited for, before the loop may close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
import weakref
from collections.abc import Coroutine
from typing import Any

from sless.tasks import wait_for

log = logging.getLogger(__name__)

#: a killed process is reaped within milliseconds; this bounds a wait that must not hang
REAP_TIMEOUT_S = 2.0
#: cleanups that outlive a cancelled caller (kept here so that they are not collected)
_finishing: set[asyncio.Task[Any]] = set()
#: every worker process started, by the loop that reaps it, until its exit was seen there
_started: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[asyncio.subprocess.Process]] = (
    weakref.WeakKeyDictionary()
)
#: how long a cancelled start waits for the process being made (a fork takes milliseconds)
SPAWN_TIMEOUT_S = 5.0
#: how long ``settle`` waits for the background cleanups and the processes, at most
SETTLE_TIMEOUT_S = 10.0


async def spawned(
    making: Coroutine[Any, Any, asyncio.subprocess.Process],
) -> asyncio.subprocess.Process:
    """The process ``making`` starts (``asyncio.create_subprocess_exec``), owned by the
    caller for certain.

    Cancelled while the process is being made, this still waits for it (the caller's
    descriptors passed to the child must stay open until the fork is done), kills its
    group and reaps it, then lets the cancellation go on. Without that the event loop
    would kill bubblewrap alone, and its child, waiting on a ``--block-fd`` still open in
    this process, would wait forever as the tenant's uid, in no cgroup."""
    task = asyncio.ensure_future(making)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task], timeout=SPAWN_TIMEOUT_S)
        if not task.done():  # not made yet: killed the moment it is
            task.add_done_callback(_kill_when_made)
        elif task.exception() is None:
            kill_group(task.result())
            await reap(task.result())
        raise


def _kill_when_made(task: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not task.cancelled() and task.exception() is None:
        kill_group(task.result())
        log.warning(
            "killed worker process %d: it started after its start was cancelled", task.result().pid
        )


def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL ``process`` and every process still in its process group."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def reap(process: asyncio.subprocess.Process, timeout_s: float = REAP_TIMEOUT_S) -> None:
    """Wait up to ``timeout_s`` for the killed ``process`` to be reaped. Shielded: a
    cancellation ends this wait, not the reaping."""
    with contextlib.suppress(TimeoutError):
        await wait_for(asyncio.shield(process.wait()), timeout_s)


def finish_in_background(cleanup: Coroutine[Any, Any, Any]) -> None:
    """Run ``cleanup`` to its end even though its caller was cancelled (the processes are
    dead already; what is left is reaping them and removing their cgroup and files)."""
    task = asyncio.get_running_loop().create_task(cleanup)
    _finishing.add(task)
    task.add_done_callback(_finishing.discard)


def track(process: asyncio.subprocess.Process) -> None:
    """Count ``process`` as started on the running loop, until its exit is seen there."""
    started = _started.setdefault(asyncio.get_running_loop(), set())
    started.difference_update([p for p in started if p.returncode is not None])
    started.add(process)


async def settle_processes(timeout_s: float = SETTLE_TIMEOUT_S) -> None:
    """Finish this loop's background cleanups and reap every process started on it.

    For the end of the one platform that runs on this loop, once its pools have stopped
    their workers: a process still running then belongs to nobody, so it is killed (and
    logged: it should not happen). Bounded: a process the kernel cannot end in time is
    logged and left, rather than hanging the stop."""
    loop = asyncio.get_running_loop()
    deadline = time.monotonic() + timeout_s
    cleanups = [task for task in _finishing if task.get_loop() is loop]
    if cleanups:
        await asyncio.wait(cleanups, timeout=timeout_s)
    started = _started.pop(loop, set())
    running = [process for process in started if process.returncode is None]
    for process in running:
        # killed already and not yet reaped, or owned by nobody: either way it ends now
        log.info("reaping worker process %d as the platform stops", process.pid)
        kill_group(process)
    for process in running:
        await reap(process, max(0.0, deadline - time.monotonic()))
        if process.returncode is None:
            log.warning("worker process %d did not exit within %gs", process.pid, timeout_s)

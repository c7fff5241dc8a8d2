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
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Coroutine
from typing import Any

#: a killed process is reaped within milliseconds; this bounds a wait that must not hang
REAP_TIMEOUT_S = 2.0
#: cleanups that outlive a cancelled caller (kept here so that they are not collected)
_finishing: set[asyncio.Task[Any]] = set()


def kill_group(process: asyncio.subprocess.Process) -> None:
    """SIGKILL ``process`` and every process still in its process group."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


async def reap(process: asyncio.subprocess.Process, timeout_s: float = REAP_TIMEOUT_S) -> None:
    """Wait up to ``timeout_s`` for the killed ``process`` to be reaped. Shielded: a
    cancellation ends this wait, not the reaping."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(process.wait()), timeout_s)


def finish_in_background(cleanup: Coroutine[Any, Any, Any]) -> None:
    """Run ``cleanup`` to its end even though its caller was cancelled (the processes are
    dead already; what is left is reaping them and removing their cgroup and files)."""
    task = asyncio.get_running_loop().create_task(cleanup)
    _finishing.add(task)
    task.add_done_callback(_finishing.discard)

"""Ending the background tasks a component owns: the one way a stop cancels them and
waits for them; the one way to wait with a time limit that keeps a cancellation; and the
one way for a callback to start a short task it does not wait for (``spawn``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)

#: tasks started by ``spawn`` and not yet ended: the loop keeps only weak references
_spawned: set[asyncio.Task[Any]] = set()


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any] | None]) -> None:
    """Cancel ``tasks`` and wait until every one has ended, whatever it raised.

    What the tasks raise is theirs (each logs its own failures): it is retrieved here,
    not raised. A cancellation of the caller is not theirs: it is raised, once the tasks
    have been told to stop (they then end on their own), so that a stop its caller gave
    up on (a timeout around a shutdown) ends at once instead of going on as if it had
    not been cancelled (``suppress(CancelledError)`` around ``await task`` did that)."""
    owned = {task for task in tasks if task is not None}
    for task in owned:
        task.cancel()
    if not owned:
        return
    try:
        await asyncio.wait(owned)
    finally:
        for task in owned:
            if task.done() and not task.cancelled():
                task.exception()  # retrieved: asyncio would log it as never retrieved


async def wait_for(awaitable: Awaitable[T], timeout_s: float | None) -> T:
    """``await awaitable``, ``TimeoutError`` after ``timeout_s`` (None: no limit).

    For every wait with a time limit in sless, instead of ``asyncio.wait_for``, which on
    Python 3.11 loses a cancellation that arrives in the same turn as the awaited result:
    it returns the result, and the task goes on as if it had not been cancelled. A
    background loop (wait for work or the poll interval, go round again) then never ends,
    and the stop that cancelled it waits forever: a platform stopped just after it
    started hung so (``tests/unit/test_tasks.py``). ``asyncio.timeout`` counts
    cancellations and raises the caller's."""
    async with asyncio.timeout(timeout_s):
        return await awaitable


def spawn(coroutine: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
    """Run ``coroutine`` as a task nobody awaits, from a callback of the running loop
    (the express path's rare turns: an error to answer, a worker to discard). The task
    is kept alive until it ends, and what it raises is logged, never lost."""
    task = asyncio.get_running_loop().create_task(coroutine, name=name)
    _spawned.add(task)
    task.add_done_callback(_spawned_ended)
    return task


def _spawned_ended(task: asyncio.Task[Any]) -> None:
    _spawned.discard(task)
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("task %s failed: %s", task.get_name(), type(error).__name__, exc_info=error)

"""Ending the background tasks a component owns: the one way a stop cancels them and
waits for them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


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

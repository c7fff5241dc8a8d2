"""The loop shared by the job runner and the invocation queue.

Both wake on a local event (work written by this process) or every poll interval (work
written by other processes), take what is due in ``run_once`` and start it as tasks; a
failed pass (the database restarting) is logged and tried again. ``stop`` ends the loop,
then lets the started tasks finish for a grace period and cancels the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sless.tasks import cancel_and_wait, wait_for

log = logging.getLogger(__name__)


class PollingWorker:
    #: the asyncio task name of the loop, and how log lines name this worker
    name = "polling-worker"

    def __init__(self, poll_interval_s: float) -> None:
        self.poll_interval_s = poll_interval_s
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()

    async def run_once(self) -> int:
        raise NotImplementedError

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name=self.name)

    def wake(self) -> None:
        self._wake.set()

    async def stop(self, grace_s: float) -> None:
        await cancel_and_wait([self._task])
        self._task = None
        if self._running:
            # started work finishes (its state is written) or is cut at the grace
            _, pending = await asyncio.wait(self._running, timeout=grace_s)
            await cancel_and_wait(pending)

    async def _loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await wait_for(self._wake.wait(), self.poll_interval_s)
            self._wake.clear()
            try:
                await self.run_once()
            except Exception as e:  # the database may be restarting: try again
                log.warning("%s pass failed: %s", self.name, type(e).__name__)

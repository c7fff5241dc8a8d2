"""The embedded gateway's in-memory view of ``http`` triggers (``Backend.http_disabled``).

The invoke path reads it without I/O. It is re-read when this process writes a trigger,
on ``NOTIFY sless_triggers`` (sent after every trigger write, by any gateway process on
the database) and at every periodic resync, so every gateway converges on the table.
"""

from __future__ import annotations

import asyncio
import logging

import asyncpg

log = logging.getLogger(__name__)

#: notified after every trigger write, so every gateway re-reads its http trigger view
TRIGGERS_CHANNEL = "sless_triggers"
#: per function with at least one http trigger: whether one of them is enabled
_HTTP_TRIGGERS = """
SELECT namespace, spec->>'function' AS function,
       bool_or(coalesce((spec->>'enabled')::boolean, true)) AS open
  FROM triggers
 WHERE spec->>'type' = 'http'
 GROUP BY namespace, spec->>'function'
"""


class HttpTriggerView:
    def __init__(self, db: asyncpg.Pool) -> None:
        self.db = db
        #: (namespace, function) -> some http trigger of it is enabled; absent: none exists
        self._open: dict[tuple[str, str], bool] = {}
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def on_notify(self, _conn: object, _pid: int, _channel: str, _payload: str) -> None:
        """A trigger changed somewhere: re-read soon (changes meanwhile coalesce)."""
        self._dirty.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._refresh_loop())

    async def _refresh_loop(self) -> None:
        while self._dirty.is_set():
            self._dirty.clear()
            try:
                await self.refresh()
            except (asyncpg.PostgresError, OSError) as e:
                log.warning("re-reading http triggers failed, will retry: %s", type(e).__name__)
                await asyncio.sleep(1.0)
                self._dirty.set()

    async def refresh(self) -> None:
        rows = await self.db.fetch(_HTTP_TRIGGERS)
        self._open = {(r["namespace"], r["function"]): bool(r["open"]) for r in rows}

    async def changed_here(self) -> None:
        """Bring this process's view up to date now, and tell the other processes."""
        await self.refresh()
        await self.db.execute("SELECT pg_notify($1, '')", TRIGGERS_CHANNEL)

    def disabled(self, namespace: str, name: str) -> bool:
        """The function has http triggers and every one of them is disabled. No I/O.

        A function without any http trigger is reachable at ``/fn/...`` as it always was.
        """
        return self._open.get((namespace, name)) is False

    def detach(self) -> asyncio.Task[None] | None:
        """The refresh in flight, if any, for the backend to cancel at stop."""
        task, self._task = self._task, None
        return task

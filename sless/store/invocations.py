"""Invocation records: a bounded, batched, asynchronous writer and the query side.

The invoke path only appends a record to an in-memory queue (no database round trip);
a background task writes batches with one ``COPY``. The queue is bounded: under overload
records are dropped and counted (``dropped``) rather than growing memory without end.
On a clean shutdown ``close()`` flushes everything still queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

import asyncpg

from sless.models import tenant_of

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InvocationRecord:
    id: uuid.UUID
    tenant: str
    namespace: str
    function: str
    status: int
    duration_ms: float
    request_bytes: int
    response_bytes: int
    started_at: datetime
    error: str | None = None
    trigger: str | None = None

    @classmethod
    def of_call(
        cls,
        id: uuid.UUID,
        namespace: str,
        function: str,
        *,
        status: int,
        duration_ms: float,
        request_bytes: int,
        response_bytes: int,
        started_at: datetime,
        error: str | None = None,
        trigger: str | None = None,
    ) -> InvocationRecord:
        """The one way a record is made: the tenant is always the namespace's owner."""
        return cls(
            id=id,
            tenant=tenant_of(namespace),
            namespace=namespace,
            function=function,
            status=status,
            duration_ms=duration_ms,
            request_bytes=request_bytes,
            response_bytes=response_bytes,
            started_at=started_at,
            error=error,
            trigger=trigger,
        )


_COLUMNS = [f.name for f in fields(InvocationRecord)]


class InvocationRecorder:
    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        max_queue: int = 100_000,
        batch_size: int = 1000,
        flush_interval_s: float = 0.2,
    ) -> None:
        self.pool = pool
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self._queue: asyncio.Queue[InvocationRecord] = asyncio.Queue(maxsize=max_queue)
        self._task: asyncio.Task[None] | None = None
        self._has_items = asyncio.Event()
        self._stopping = asyncio.Event()
        self.dropped = 0
        self.written = 0
        self.failed_batches = 0

    @property
    def buffered(self) -> int:
        """Records waiting to be written (for metrics)."""
        return self._queue.qsize()

    def record(self, record: InvocationRecord) -> None:
        try:
            self._queue.put_nowait(record)
        except asyncio.QueueFull:
            self.dropped += 1
            return
        self._has_items.set()

    def start(self) -> None:
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._run(), name="invocation-recorder")

    async def _run(self) -> None:
        # Never cancelled: a COPY interrupted half-way could be retried as a duplicate.
        # close() sets _stopping and the loop drains the queue and returns.
        while True:
            await self._has_items.wait()
            if not self._stopping.is_set():
                # gather a batch for a moment; stopping cuts the wait short
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.flush_interval_s)
            batch = self._drain()
            if batch:
                await self._write(batch)
            if self._queue.empty():
                self._has_items.clear()
                if self._stopping.is_set():
                    return

    def _drain(self) -> list[InvocationRecord]:
        batch: list[InvocationRecord] = []
        while len(batch) < self.batch_size and not self._queue.empty():
            batch.append(self._queue.get_nowait())
        return batch

    async def _write(self, batch: list[InvocationRecord]) -> None:
        rows = [tuple(getattr(r, c) for c in _COLUMNS) for r in batch]
        try:
            async with self.pool.acquire() as conn:
                await conn.copy_records_to_table("invocations", records=rows, columns=_COLUMNS)
            self.written += len(rows)
        except (asyncpg.PostgresError, OSError) as e:
            # Losing a batch of history must not take the gateway down; it is counted.
            self.failed_batches += 1
            self.dropped += len(rows)
            log.error("could not write %d invocation records: %s", len(rows), type(e).__name__)

    async def flush(self) -> None:
        """Write everything queued now (tests and shutdown)."""
        while batch := self._drain():
            await self._write(batch)

    async def close(self) -> None:
        """Stop the writer after everything queued is written."""
        self._stopping.set()
        self._has_items.set()
        if self._task is not None:
            await self._task
            self._task = None
        await self.flush()


async def list_invocations(
    pool: asyncpg.Pool,
    namespace: str,
    *,
    function: str | None = None,
    since: datetime | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    args: list[Any] = [namespace]
    where = ["namespace = $1"]
    if function is not None:
        args.append(function)
        where.append(f"function = ${len(args)}")
    if since is not None:
        args.append(since)
        where.append(f"started_at >= ${len(args)}")
    args.append(limit)
    rows = await pool.fetch(
        f"SELECT * FROM invocations WHERE {' AND '.join(where)}"  # noqa: S608 - fixed fragments
        f" ORDER BY started_at DESC LIMIT ${len(args)}",
        *args,
    )
    return [dict(r.items()) for r in rows]

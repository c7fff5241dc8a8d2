"""Invocation records: a bounded, batched, asynchronous writer (the query side is
``history.py``).

The invoke path only appends a record to an in-memory queue (no database round trip)
and, when a journal directory is given, one line to the write-ahead journal
(``journal.py``: one ``write(2)``, no fsync), so a SIGKILL of the process loses nothing
that was recorded. A background task writes batches of up to 10,000 records, each with
one ``COPY``; a batch that holds an id already written (retried after a lost answer, or
replayed from the journal after a crash) makes the ``COPY`` fail whole and goes in again
with ``INSERT … SELECT unnest(…) ON CONFLICT (id) DO NOTHING``: never a duplicate.

When the database is unreachable (restarted, killed, a network cut) the writer keeps the
batch and retries it with a capped back-off; everything recorded meanwhile waits in the
queue. The queue is bounded (``max_queue`` records, 100,000 by default: at 200 calls/s
about eight minutes of outage). Past that bound records are dropped and counted
(``dropped``, ``sless_invocation_records_dropped_total``) rather than growing memory
without end; a dropped record is not journaled either. On a clean shutdown ``close()``
writes everything still queued; if the database is down then, the records stay in the
journal and the next start replays them (``replay``).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import json.encoder
import logging
import math
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import asyncpg

from sless.models import tenant_of
from sless.store.journal import Journal, JournalBusy
from sless.tasks import wait_for

log = logging.getLogger(__name__)

#: a str as a JSON string literal, ASCII only (the C function json.dumps uses)
_quote = json.encoder.encode_basestring_ascii
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class InvocationRecord(NamedTuple):
    """One call's record: its values in the columns' order (the writer copies it as the
    row it is). A named tuple, not a frozen dataclass: made on every call, and a frozen
    dataclass sets each of its 15 fields through ``object.__setattr__`` (2.7 against
    0.9 us, issue 32)."""

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
    #: the function's version that served the call (``v3``); None when none was reached
    version: str | None = None
    #: why the call died, as its caller was told (``sless.models.endings``); None: it did not
    reason: str | None = None
    #: the messages of a WebSocket session, the caller's and the function's; None: no session
    request_messages: int | None = None
    response_messages: int | None = None

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
        version: str | None = None,
        reason: str | None = None,
        request_messages: int | None = None,
        response_messages: int | None = None,
    ) -> InvocationRecord:
        """The one way a record is made: the tenant is always the namespace's owner."""
        return cls(
            id, tenant_of(namespace), namespace, function, status, duration_ms, request_bytes,
            response_bytes, started_at, error, trigger, version, reason, request_messages,
            response_messages,
        )  # fmt: skip

    def journal_line(self) -> bytes:
        """This record as one journal line: a JSON array in :data:`_COLUMNS` order.

        Formatted directly (strings through the json module's C escaper), not with
        ``dataclasses.asdict`` and ``json.dumps``: the invoke path pays for this on every
        call, and that way cost about 6x more.
        """
        duration = float(self.duration_ms)
        # as json.dumps writes them (json.loads reads them back)
        number = repr(duration) if math.isfinite(duration) else _NON_FINITE[repr(duration)]
        error, trigger, version, reason = self.error, self.trigger, self.version, self.reason
        sent, answered = self.request_messages, self.response_messages
        return (
            f'["{self.id.hex}",{_quote(self.tenant)},{_quote(self.namespace)},'
            f"{_quote(self.function)},{int(self.status)},{number},"
            f"{int(self.request_bytes)},{int(self.response_bytes)},"
            f'"{self.started_at.isoformat()}",'
            f"{'null' if error is None else _quote(error)},"
            f"{'null' if trigger is None else _quote(trigger)},"
            f"{'null' if version is None else _quote(version)},"
            f"{'null' if reason is None else _quote(reason)},"
            f"{'null' if sent is None else int(sent)},"
            f"{'null' if answered is None else int(answered)}]\n"
        ).encode()

    @classmethod
    def from_journal(cls, values: dict[str, Any] | list[Any]) -> InvocationRecord:
        """A record from a journal line: an array (:meth:`journal_line`) or an object
        keyed by column (segments written by earlier versions)."""
        if isinstance(values, list):
            # earlier versions wrote fewer columns (no reason, no messages): the ones they
            # knew, in the same order
            if len(values) not in _JOURNAL_LENGTHS:
                raise ValueError(f"a journal line of {len(values)} values")
            values = dict(zip(_COLUMNS, values, strict=False))
        return cls(
            id=uuid.UUID(values["id"]),
            tenant=values["tenant"],
            namespace=values["namespace"],
            function=values["function"],
            status=int(values["status"]),
            duration_ms=float(values["duration_ms"]),
            request_bytes=int(values["request_bytes"]),
            response_bytes=int(values["response_bytes"]),
            started_at=datetime.fromisoformat(values["started_at"]),
            error=values.get("error"),
            trigger=values.get("trigger"),
            version=values.get("version"),
            reason=values.get("reason"),
            request_messages=_count(values.get("request_messages")),
            response_messages=_count(values.get("response_messages")),
        )


def _count(value: Any) -> int | None:
    return None if value is None else int(value)


_COLUMNS = list(InvocationRecord._fields)
#: the lengths of the journal lines this version and earlier ones wrote (before
#: ``reason``, before the messages of a session, now)
_JOURNAL_LENGTHS = frozenset((len(_COLUMNS) - 3, len(_COLUMNS) - 2, len(_COLUMNS)))
_TYPES = [
    "uuid", "text", "text", "text", "int4", "float8", "int8", "int8", "timestamptz", "text", "text",
    "text", "text", "int8", "int8",
]  # fmt: skip
_INSERT = (
    f"INSERT INTO invocations ({', '.join(_COLUMNS)})"  # noqa: S608 - fixed column names
    f" SELECT * FROM unnest({', '.join(f'${i}::{t}[]' for i, t in enumerate(_TYPES, 1))})"
    " ON CONFLICT (id) DO NOTHING"
)
#: the database errors that pass: the writer keeps the batch and tries again
TRANSIENT_DB_ERRORS = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    # asyncpg's state machine, when the server cuts a connection in the middle of a call
    asyncpg.InternalClientError,
    OSError,
    TimeoutError,
)


async def insert_records(
    pool: asyncpg.Pool | asyncpg.Connection | asyncpg.pool.PoolConnectionProxy,
    batch: list[InvocationRecord],
) -> int:
    """Insert ``batch`` once (also inside a caller's transaction, on its connection); a
    record whose id is there already is skipped.

    Outside a transaction the batch goes in with one ``COPY`` (several times faster than
    an ``INSERT``). A ``COPY`` cannot skip a duplicate: when one id of the batch is there
    already (a batch retried after a lost answer, a journal replayed twice) it fails whole,
    inserting nothing, and the batch is inserted again with ``ON CONFLICT (id) DO
    NOTHING``. Inside a caller's transaction a failed ``COPY`` would abort it, so there
    the ``INSERT`` runs at once.
    """
    if not batch:
        return 0
    rows = batch  # a record is its row
    in_transaction = not isinstance(pool, asyncpg.Pool) and pool.is_in_transaction()
    status: str
    if in_transaction:
        status = await pool.execute(_INSERT, *[list(c) for c in zip(*rows, strict=True)])
    else:
        try:
            status = await pool.copy_records_to_table("invocations", records=rows, columns=_COLUMNS)
        except asyncpg.UniqueViolationError:
            columns = [list(column) for column in zip(*rows, strict=True)]
            status = await pool.execute(_INSERT, *columns)
    return int(status.rsplit(" ", 1)[-1])


class InvocationRecorder:
    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        journal_dir: Path | None = None,
        max_queue: int = 100_000,
        batch_size: int = 10_000,
        flush_interval_s: float = 0.2,
        retry_max_s: float = 2.0,
    ) -> None:
        self.pool = pool
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self.retry_max_s = retry_max_s
        self.journal = Journal(journal_dir) if journal_dir is not None else None
        self.max_queue = max_queue
        #: a deque, not an asyncio.Queue: nothing awaits it (``_has_items`` wakes the
        #: writer), and the invoke path pays for every append
        self._queue: collections.deque[InvocationRecord] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        self._has_items = asyncio.Event()
        #: a whole batch is queued (or stopping): the writer stops gathering at once
        self._batch_full = asyncio.Event()
        self._stopping = asyncio.Event()
        self.dropped = 0
        self.written = 0
        self.replayed = 0
        self.failed_batches = 0
        #: batches written and the seconds they took in all, from the first attempt to
        #: the database's answer (retries while it was away included): flush latency
        self.flushes = 0
        self.flush_seconds = 0.0
        self._gave_up = False

    @property
    def journal_errors(self) -> int:
        """Records not journaled (disk full...): they reach the database from memory, but
        a crash before then would lose them."""
        return self.journal.errors if self.journal is not None else 0

    @property
    def buffered(self) -> int:
        """Records waiting to be written (for metrics)."""
        return len(self._queue)

    def record(self, record: InvocationRecord) -> None:
        if len(self._queue) >= self.max_queue:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 10_000 == 0:
                log.error("invocation record queue full: %d records dropped", self.dropped)
            return
        self._queue.append(record)
        if self.journal is not None:
            # queued and journaled in one step (no await between): rotate() in the writer
            # never separates a record from its journal line
            self.journal.append(record.journal_line())
        self._has_items.set()
        if len(self._queue) >= self.batch_size:
            self._batch_full.set()

    async def replay(self) -> int:
        """Write what the journal holds from a previous process (idempotent), then
        delete it; and the same for the journals of this process's dead siblings
        (``Journal.siblings``). Call once, before ``start``. Returns the records newly
        written."""
        if self.journal is None:
            return 0
        new = await self._replay_segments(self.journal.open())
        for directory in self.journal.siblings():
            with Journal.adopted(directory) as segments:
                if segments:
                    new += await self._replay_segments(segments)
        self.replayed += new
        if new:
            log.info("replayed %d invocation records from the journal", new)
        return new

    async def _replay_segments(self, segments: list[Path]) -> int:
        new = 0
        for segment in segments:
            batch: list[InvocationRecord] = []
            for values in Journal.read(segment):
                try:
                    batch.append(InvocationRecord.from_journal(values))
                except (KeyError, TypeError, ValueError):
                    log.warning("skipping a malformed record in journal segment %s", segment.name)
                if len(batch) >= self.batch_size:
                    new += await insert_records(self.pool, batch)
                    batch = []
            if batch:
                new += await insert_records(self.pool, batch)
            Journal.remove([segment])
        return new

    def start(self) -> None:
        if self.journal is not None and not self.journal.is_open:
            # rotate() would seal, and then delete, segments nobody replayed
            raise RuntimeError("replay() the invocation journal before start()")
        if self._task is None:
            self._stopping.clear()
            self._task = asyncio.create_task(self._run(), name="invocation-recorder")

    async def _run(self) -> None:
        # Never cancelled: close() sets _stopping and the loop drains the queue and returns.
        while True:
            await self._has_items.wait()
            if not self._stopping.is_set() and len(self._queue) < self.batch_size:
                # gather a batch for a moment; a full batch or stopping cuts it short
                self._batch_full.clear()
                with contextlib.suppress(TimeoutError):
                    await wait_for(self._batch_full.wait(), self.flush_interval_s)
            if not await self._write_round():
                return  # stopping with the database down: the journal keeps the rest
            if not self._queue:
                self._has_items.clear()
                if self._stopping.is_set():
                    return

    async def _write_round(self) -> bool:
        """Write everything queued now; then the journal segments holding it go."""
        sealed = self.journal.rotate() if self.journal is not None else []
        remaining = len(self._queue)
        while remaining > 0:
            batch = self._drain(min(remaining, self.batch_size))
            remaining -= len(batch)
            if not await self._write(batch):
                return False
        if self.journal is not None:
            Journal.remove(sealed)
        return True

    def _drain(self, count: int) -> list[InvocationRecord]:
        popleft = self._queue.popleft
        return [popleft() for _ in range(min(count, len(self._queue)))]

    async def _write(self, batch: list[InvocationRecord]) -> bool:
        """Write ``batch``, retrying while the database is away. False only when stopping
        gave up on it: then it is counted dropped unless the journal holds it."""
        delay = 0.1
        started = time.monotonic()
        while True:
            try:
                await insert_records(self.pool, batch)
            except TRANSIENT_DB_ERRORS as e:
                self.failed_batches += 1
                if self.failed_batches == 1 or self.failed_batches % 50 == 0:
                    log.error(
                        "could not write %d invocation records (%s); retrying",
                        len(batch),
                        type(e).__name__,
                    )
                if self._stopping.is_set():
                    self._gave_up = True
                    if self.journal is None:
                        self.dropped += len(batch) + len(self._queue)
                    return False
                with contextlib.suppress(TimeoutError):
                    await wait_for(self._stopping.wait(), delay)
                delay = min(delay * 2, self.retry_max_s)
                continue
            self.written += len(batch)
            self.flushes += 1
            self.flush_seconds += time.monotonic() - started
            return True

    async def flush(self) -> None:
        """Write everything queued now (tests)."""
        await self._write_round()

    async def close(self) -> None:
        """Stop the writer after everything queued is written (or, with the database
        down, left in the journal for the next start)."""
        self._stopping.set()
        self._batch_full.set()
        self._has_items.set()
        if self._task is not None:
            await self._task
            self._task = None
        elif self._queue:
            await self._write_round()
        if self.journal is not None:
            self.journal.close(written=not self._gave_up and not self._queue)


async def start_recorder(pool: asyncpg.Pool, journal_dir: Path) -> InvocationRecorder:
    """A started recorder journaling in ``journal_dir``, after replaying what a previous
    process left there. Without the directory (another process holds it) the recorder
    runs on memory alone, and says so."""
    recorder = InvocationRecorder(pool, journal_dir=journal_dir)
    try:
        await recorder.replay()
    except JournalBusy:
        log.warning(
            "%s is in use by another process: invocation records are not journaled"
            " (a crash of this process can lose the ones not written yet)",
            journal_dir,
        )
        recorder = InvocationRecorder(pool)
    recorder.start()
    return recorder

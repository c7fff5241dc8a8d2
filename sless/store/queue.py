"""The durable queue of asynchronous invocations.

``enqueue`` writes the request (headers already stripped of credentials and hop-by-hop
fields by the gateway); workers in any gateway process take due rows with ``FOR UPDATE
SKIP LOCKED``, so a row is worked on by one worker at a time.

Exactly once, or visibly interrupted: a taken row carries a fresh ``lease`` (a uuid, the
fence: only the attempt holding it may write the row again) until ``locked_until`` (the
function's timeout plus a margin). ``dispatch`` stamps ``dispatched_at`` and counts the
attempt, in PostgreSQL, before the call is handed to the function. When a lease runs out
(its worker's process stopped), a row never dispatched is taken again (it never ran), and
a dispatched one is never run again: ``interrupt`` ends it ``interrupted``, with its
invocation record. After ``max_attempts`` failed attempts a row is ``dead`` (the
dead-letter state), kept for inspection. A terminal state and its invocation record are
written in one transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from sless.errors import QuotaExceeded
from sless.store.invocations import InvocationRecord, insert_records
from sless.store.locks import QUEUE_LOCK_CLASS, lock_in_transaction

#: timeout assumed for a function the table does not know (deleted meanwhile)
_DEFAULT_TIMEOUT_S = 30.0
#: the error of an interrupted call, in its row and its invocation record
INTERRUPTED = "interrupted"
_INTERRUPTED_MESSAGE = (
    "interrupted: the gateway running it stopped after handing it to the function;"
    " it is not run again (it may or may not have completed)"
)
#: the row's lease: the function's timeout (from its serving spec) plus the margin ($n)
_LEASE_SQL = """now() + make_interval(secs => ${margin} + coalesce(
    (SELECT (f.serving_spec->>'timeout_s')::float FROM functions f
      WHERE f.namespace = q.namespace AND f.name = q.function), {default}))"""


def _lease(margin_param: int) -> str:
    return _LEASE_SQL.format(margin=margin_param, default=_DEFAULT_TIMEOUT_S)


@dataclass(frozen=True)
class QueuedCall:
    """One asynchronous call: what the caller asked (``enqueue``), then its queue row."""

    id: uuid.UUID
    namespace: str
    function: str
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    #: attempts dispatched so far (this one included once ``dispatch`` counted it)
    attempts: int = 0
    #: the attempts the caller asked for (``X-Sless-Retries``), 0: the queue's setting;
    #: ``enqueue`` caps it at that setting
    max_attempts: int = 0
    #: the fence of this attempt
    lease: uuid.UUID | None = None
    #: the version the caller named (``name@v3``); None: drawn by the traffic split
    version: str | None = None
    #: the W3C trace context its attempts continue (the gateway's ``sless.enqueue``
    #: span); None: tracing was off
    traceparent: str | None = None


def _call(row: Any) -> QueuedCall:
    return QueuedCall(
        id=row["id"],
        namespace=row["namespace"],
        function=row["function"],
        method=row["method"],
        path=row["path"],
        headers=[(str(k), str(v)) for k, v in row["headers"]],
        body=bytes(row["body"]),
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        lease=row["lease"],
        version=row["version"],
        traceparent=row["traceparent"],
    )


def interrupted_record(row: Any) -> InvocationRecord:
    """The invocation record of a call cut after its dispatch: status 500, ``interrupted``."""
    started = row["dispatched_at"]
    return InvocationRecord.of_call(
        row["id"],
        row["namespace"],
        row["function"],
        status=500,
        duration_ms=max(0.0, (row["finished_at"] - started).total_seconds() * 1000),
        request_bytes=len(row["body"]),
        response_bytes=0,
        started_at=started,
        error=INTERRUPTED,
        trigger="async",
    )


class QueueRepository:
    def __init__(self, pool: asyncpg.Pool, *, lease_margin_s: float = 30.0) -> None:
        self.pool = pool
        #: lease of a taken row beyond the function's timeout
        self.lease_margin_s = lease_margin_s

    async def enqueue(self, call: QueuedCall, *, max_pending: int | None = None) -> None:
        """Queue a call; with ``max_pending``, refuse it (``QuotaExceeded``
        ``queued_calls``) when the namespace has that many calls queued or running. The
        count and the insert run under the namespace's queue lock: concurrent calls
        cannot all take the last place."""
        async with self.pool.acquire() as conn, conn.transaction():
            if max_pending is not None:
                await lock_in_transaction(conn, QUEUE_LOCK_CLASS, call.namespace)
                pending = await conn.fetchval(
                    "SELECT count(*) FROM invocation_queue"
                    " WHERE namespace = $1 AND state IN ('queued', 'running')",
                    call.namespace,
                )
                if pending >= max_pending:
                    raise QuotaExceeded.past(
                        "queued_calls", used=pending, requested=pending + 1, limit=max_pending
                    )
            await conn.execute(
                "INSERT INTO invocation_queue"
                " (id, namespace, function, method, path, headers, body, max_attempts, version,"
                " traceparent)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                call.id,
                call.namespace,
                call.function,
                call.method,
                call.path,
                [list(pair) for pair in call.headers],
                call.body,
                call.max_attempts,
                call.version,
                call.traceparent,
            )

    async def pending(self, namespace: str) -> int:
        """The namespace's calls queued or running (its ``queued_calls`` quota)."""
        value = await self.pool.fetchval(
            "SELECT count(*) FROM invocation_queue"
            " WHERE namespace = $1 AND state IN ('queued', 'running')",
            namespace,
        )
        return int(value)

    async def take(self, limit: int) -> list[QueuedCall]:
        """Take up to ``limit`` due calls, and calls taken but never dispatched whose
        worker's lease ran out (they never ran), each under a fresh lease."""
        rows = await self.pool.fetch(
            f"""
            UPDATE invocation_queue q
               SET state = 'running', lease = gen_random_uuid(), dispatched_at = NULL,
                   started_at = coalesce(q.started_at, now()),
                   locked_until = {_lease(2)}
             WHERE q.id IN (
                   SELECT id FROM invocation_queue
                    WHERE (state = 'queued' AND next_attempt_at <= now())
                       OR (state = 'running' AND dispatched_at IS NULL
                           AND locked_until < now())
                    ORDER BY next_attempt_at
                    LIMIT $1
                    FOR UPDATE SKIP LOCKED)
            RETURNING q.*
            """,  # noqa: S608 - fixed SQL text
            limit,
            self.lease_margin_s,
        )
        return [_call(r) for r in rows]

    async def dispatch(self, call: QueuedCall) -> QueuedCall | None:
        """Stamp the call as handed to its function and count the attempt, before it is
        sent; None when this attempt no longer holds the row (do not send it)."""
        row = await self.pool.fetchrow(
            f"""
            UPDATE invocation_queue q
               SET dispatched_at = now(), attempts = q.attempts + 1,
                   locked_until = {_lease(3)}
             WHERE q.id = $1 AND q.lease = $2 AND q.state = 'running'
               AND q.dispatched_at IS NULL
            RETURNING q.*
            """,  # noqa: S608 - fixed SQL text
            call.id,
            call.lease,
            self.lease_margin_s,
        )
        return _call(row) if row is not None else None

    async def release(self, call: QueuedCall) -> None:
        """Give back a call taken but never dispatched (this process is stopping)."""
        await self.pool.execute(
            "UPDATE invocation_queue SET state = 'queued', lease = NULL, locked_until = NULL"
            " WHERE id = $1 AND lease = $2 AND state = 'running' AND dispatched_at IS NULL",
            call.id,
            call.lease,
        )

    async def finish(
        self,
        call: QueuedCall,
        *,
        state: str,
        status: int | None,
        result: bytes | None,
        result_truncated: bool,
        content_type: str | None,
        error: str | None,
        retry_at: datetime | None = None,
        record: InvocationRecord | None = None,
    ) -> bool:
        """Record an attempt's outcome: ``succeeded``/``failed``/``dead`` (with the call's
        invocation record, in the same transaction), or back to ``queued`` until
        ``retry_at``. Only the attempt holding the row's lease may write: False when it
        no longer does (the row was interrupted meanwhile; nothing is written)."""
        async with self.pool.acquire() as conn, conn.transaction():
            written: str = await conn.execute(
                """
                UPDATE invocation_queue
                   SET state = $3, status = $4, result = $5, result_truncated = $6,
                       content_type = $7, error = $8, locked_until = NULL, lease = NULL,
                       next_attempt_at = coalesce($9, next_attempt_at),
                       dispatched_at = CASE WHEN $3 = 'queued' THEN NULL ELSE dispatched_at END,
                       finished_at = CASE WHEN $3 = 'queued' THEN NULL ELSE now() END
                 WHERE id = $1 AND lease = $2 AND state = 'running'
                """,
                call.id,
                call.lease,
                state,
                status,
                result,
                result_truncated,
                content_type,
                error,
                retry_at,
            )
            if written == "UPDATE 0":
                return False
            if record is not None:
                await insert_records(conn, [record])
        return True

    async def interrupt(self, *, all_running: bool = False) -> list[QueuedCall]:
        """End ``interrupted`` the dispatched calls whose worker stopped: their lease ran
        out (or, ``all_running``, every running one: this process is the database's only
        user and has just started). Calls taken but never dispatched go back to
        ``queued`` at once with ``all_running`` (else ``take`` takes them after their
        lease). Each interrupted call gets its invocation record in the same
        transaction; returns the interrupted calls (for their callbacks)."""
        stale = "TRUE" if all_running else "locked_until < now()"
        async with self.pool.acquire() as conn, conn.transaction():
            if all_running:
                await conn.execute(
                    "UPDATE invocation_queue SET state = 'queued', lease = NULL,"
                    " locked_until = NULL WHERE state = 'running' AND dispatched_at IS NULL"
                )
            rows = await conn.fetch(
                f"""
                UPDATE invocation_queue
                   SET state = 'interrupted', status = NULL, error = $1,
                       locked_until = NULL, lease = NULL, finished_at = now()
                 WHERE id IN (SELECT id FROM invocation_queue
                               WHERE state = 'running' AND dispatched_at IS NOT NULL
                                 AND {stale}
                               FOR UPDATE SKIP LOCKED)
                RETURNING *
                """,  # noqa: S608 - fixed SQL text
                _INTERRUPTED_MESSAGE,
            )
            if rows:
                await insert_records(conn, [interrupted_record(r) for r in rows])
        return [_call(r) for r in rows]

    async def get(self, namespace: str, invocation_id: uuid.UUID) -> dict[str, Any] | None:
        row = await self.pool.fetchrow(
            "SELECT id, namespace, function, state, attempts, max_attempts, next_attempt_at,"
            " status, result, result_truncated, content_type, error, created_at, started_at,"
            " finished_at, callback FROM invocation_queue WHERE namespace = $1 AND id = $2",
            namespace,
            invocation_id,
        )
        return dict(row.items()) if row is not None else None

    async def set_callback(self, invocation_id: uuid.UUID, outcome: dict[str, Any]) -> None:
        """Record how the call's callback went (shown by the invocation's status)."""
        await self.pool.execute(
            "UPDATE invocation_queue SET callback = $2 WHERE id = $1", invocation_id, outcome
        )

    async def delete_namespace(self, namespace: str) -> None:
        await self.pool.execute("DELETE FROM invocation_queue WHERE namespace = $1", namespace)

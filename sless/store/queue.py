"""The durable queue of asynchronous invocations.

``enqueue`` writes the request (headers already stripped of credentials and hop-by-hop
fields by the gateway); workers in any gateway process take due rows with ``FOR UPDATE
SKIP LOCKED``, so a row is worked on by one worker at a time. A taken row carries a lease
(``locked_until``, the function's timeout plus a margin): a row whose worker's process
stopped is taken again after it, so delivery is at least once. After ``max_attempts``
failures a row is ``dead`` (the dead-letter state), kept for inspection.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from sless.errors import NotFound

#: lease of a taken row beyond the function's timeout
_LEASE_MARGIN_S = 30.0
#: timeout assumed for a function the table does not know (deleted meanwhile)
_DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class QueuedCall:
    id: uuid.UUID
    namespace: str
    function: str
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    attempts: int
    max_attempts: int


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
    )


class QueueRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def enqueue(
        self,
        invocation_id: uuid.UUID,
        namespace: str,
        function: str,
        *,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes,
        max_attempts: int,
    ) -> None:
        await self.pool.execute(
            "INSERT INTO invocation_queue"
            " (id, namespace, function, method, path, headers, body, max_attempts)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            invocation_id,
            namespace,
            function,
            method,
            path,
            [list(pair) for pair in headers],
            body,
            max_attempts,
        )

    async def take(self, limit: int) -> list[QueuedCall]:
        """Take up to ``limit`` due calls (and calls whose worker's lease ran out)."""
        rows = await self.pool.fetch(
            """
            UPDATE invocation_queue q
               SET state = 'running', attempts = q.attempts + 1,
                   started_at = coalesce(q.started_at, now()),
                   locked_until = now() + make_interval(secs => $2 + coalesce(
                       (SELECT (f.serving_spec->>'timeout_s')::float FROM functions f
                         WHERE f.namespace = q.namespace AND f.name = q.function), $3))
             WHERE q.id IN (
                   SELECT id FROM invocation_queue
                    WHERE (state = 'queued' AND next_attempt_at <= now())
                       OR (state = 'running' AND locked_until < now())
                    ORDER BY next_attempt_at
                    LIMIT $1
                    FOR UPDATE SKIP LOCKED)
            RETURNING q.*
            """,
            limit,
            _LEASE_MARGIN_S,
            _DEFAULT_TIMEOUT_S,
        )
        return [_call(r) for r in rows]

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
    ) -> None:
        """Record an attempt's outcome: ``succeeded``/``failed``/``dead``, or back to
        ``queued`` until ``retry_at``. Only the attempt that holds the row may write."""
        await self.pool.execute(
            """
            UPDATE invocation_queue
               SET state = $3, status = $4, result = $5, result_truncated = $6,
                   content_type = $7, error = $8, locked_until = NULL,
                   next_attempt_at = coalesce($9, next_attempt_at),
                   finished_at = CASE WHEN $3 = 'queued' THEN NULL ELSE now() END
             WHERE id = $1 AND attempts = $2 AND state = 'running'
            """,
            call.id,
            call.attempts,
            state,
            status,
            result,
            result_truncated,
            content_type,
            error,
            retry_at,
        )

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


async def get_invocation(
    pool: asyncpg.Pool, namespace: str, invocation_id: uuid.UUID
) -> dict[str, Any]:
    """The history record of one invocation, or NotFound."""
    row = await pool.fetchrow(
        "SELECT * FROM invocations WHERE namespace = $1 AND id = $2", namespace, invocation_id
    )
    if row is None:
        raise NotFound("invocation not found")
    return dict(row.items())

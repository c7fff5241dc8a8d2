"""The query side of invocations: the history, one record, the queue's state.

What the gateway reads about calls, apart from the writer (``invocations.py``) and the
queue's workers (``queue.py``): a keyset page of the history, one record, one queued
call, the time buckets of ``stats.py`` and the queue depth by state (for ``/metrics``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import asyncpg

from sless.errors import NotFound
from sless.store.queue import QueueRepository
from sless.store.stats import invocation_buckets, verdict_buckets

#: the states ``/metrics`` reports the queue depth of (each, 0 when none)
QUEUE_STATES = ("queued", "running", "dead", "interrupted")


class InvocationHistory:
    """What the gateway reads about calls, over the one pool."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def page(self, namespace: str, **query: Any) -> list[dict[str, Any]]:
        """A keyset page of the history (:func:`list_invocations`)."""
        return await list_invocations(self.pool, namespace, **query)

    async def get(self, namespace: str, invocation_id: uuid.UUID) -> dict[str, Any]:
        """The record of one invocation, or NotFound."""
        return await get_invocation(self.pool, namespace, invocation_id)

    async def queued(self, namespace: str, invocation_id: uuid.UUID) -> dict[str, Any] | None:
        """The queue row of an asynchronous call (None: not queued, or gone)."""
        return await QueueRepository(self.pool).get(namespace, invocation_id)

    async def buckets(self, **query: Any) -> list[dict[str, Any]]:
        """Invocations per time bucket (``stats.invocation_buckets``)."""
        return await invocation_buckets(self.pool, **query)

    async def verdict_buckets(self, **query: Any) -> list[dict[str, Any]]:
        """Validation verdicts per time bucket (``stats.verdict_buckets``)."""
        return await verdict_buckets(self.pool, **query)

    async def queue_depth(self) -> dict[str, int]:
        """Rows of the queue per state, every state of :data:`QUEUE_STATES` named."""
        rows = await self.pool.fetch(
            "SELECT state, count(*) AS n FROM invocation_queue GROUP BY state"
        )
        depth = dict.fromkeys(QUEUE_STATES, 0)
        for row in rows:
            if row["state"] in depth:
                depth[row["state"]] = row["n"]
        return depth


#: ``?status=`` classes
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")
#: states of an asynchronous invocation (``invocation_queue.state``)
ASYNC_STATES = ("queued", "running", "succeeded", "failed", "dead", "interrupted")


async def list_invocations(
    pool: asyncpg.Pool,
    namespace: str,
    *,
    function: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    status_class: str | None = None,
    async_state: str | None = None,
    after: tuple[datetime, uuid.UUID] | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """Records newest first, in ``(started_at, id)`` order: a keyset page.

    ``after`` is the ``(started_at, id)`` of the last record of the previous page: the page
    holds the records strictly older in that order, so paging never skips or repeats a
    record whatever is written meanwhile. ``since`` is inclusive, ``until`` exclusive.
    ``async_state`` keeps the records of asynchronous calls whose queue row is in it.
    """
    args: list[Any] = [namespace]
    where = ["i.namespace = $1"]

    def add(condition: str, *values: Any) -> None:
        for value in values:
            args.append(value)
            condition = condition.replace("$?", f"${len(args)}", 1)
        where.append(condition)

    if function is not None:
        add("i.function = $?", function)
    if since is not None:
        add("i.started_at >= $?", since)
    if until is not None:
        add("i.started_at < $?", until)
    if status_class is not None:
        if status_class not in STATUS_CLASSES:
            raise ValueError(f"status class {status_class!r}")
        low = int(status_class[0]) * 100
        add("i.status >= $? AND i.status < $?", low, low + 100)
    if async_state is not None:
        add(
            "EXISTS (SELECT 1 FROM invocation_queue q"
            " WHERE q.id = i.id AND q.namespace = i.namespace AND q.state = $?)",
            async_state,
        )
    if after is not None:
        add("(i.started_at, i.id) < ($?, $?)", *after)
    args.append(limit)
    rows = await pool.fetch(
        f"SELECT i.* FROM invocations i WHERE {' AND '.join(where)}"  # noqa: S608 - fixed fragments
        f" ORDER BY i.started_at DESC, i.id DESC LIMIT ${len(args)}",
        *args,
    )
    return [dict(r.items()) for r in rows]


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

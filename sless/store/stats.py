"""Aggregates over the invocation history and the validation reports, in time buckets.

The console draws these (a function's latency chart, the provider's platform health), but
they are plain API data: counts, errors and latency percentiles per bucket of ``step``
seconds over the last ``window`` seconds. PostgreSQL does the grouping and the
percentiles, so a busy function never ships its rows to the gateway.

Buckets are aligned to multiples of ``step`` since the epoch, so two calls a moment apart
agree on the edges; empty buckets are omitted (the caller knows the grid from ``step``).
An invocation is an error when its status is 500 or more or it carries an error message:
a 4xx is the caller's mistake, not the function's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

_BUCKET = "to_timestamp(floor(extract(epoch FROM {column}) / $1) * $1)"
_ERROR = "(status >= 500 OR error IS NOT NULL)"


def _rows(rows: list[Any]) -> list[dict[str, Any]]:
    views = []
    for row in rows:
        data = dict(row.items())
        data["at"] = data["at"].isoformat()
        views.append(data)
    return views


async def invocation_buckets(
    pool: asyncpg.Pool,
    *,
    since: datetime,
    step_s: int,
    namespace: str | None = None,
    function: str | None = None,
) -> list[dict[str, Any]]:
    """Per bucket: ``count``, ``errors``, ``p50_ms``, ``p99_ms`` (one namespace, or all)."""
    args: list[Any] = [step_s, since]
    where = ["started_at >= $2"]
    if namespace is not None:
        args.append(namespace)
        where.append(f"namespace = ${len(args)}")
    if function is not None:
        args.append(function)
        where.append(f"function = ${len(args)}")
    rows = await pool.fetch(
        f"SELECT {_BUCKET.format(column='started_at')} AS at,"  # noqa: S608 - fixed fragments
        f" count(*) AS count, count(*) FILTER (WHERE {_ERROR}) AS errors,"
        " percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50_ms,"
        " percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms"
        f" FROM invocations WHERE {' AND '.join(where)} GROUP BY 1 ORDER BY 1",
        *args,
    )
    return _rows(rows)


async def verdict_buckets(
    pool: asyncpg.Pool, *, since: datetime, step_s: int
) -> list[dict[str, Any]]:
    """Per bucket: how many uploads validation allowed, held for review and rejected.

    Reports are cached by code digest, so the same code uploaded again is counted once,
    at its latest validation.
    """
    rows = await pool.fetch(
        f"SELECT {_BUCKET.format(column='created_at')} AS at,"  # noqa: S608 - fixed fragments
        " count(*) FILTER (WHERE verdict = 'allow') AS allow,"
        " count(*) FILTER (WHERE verdict = 'review') AS review,"
        " count(*) FILTER (WHERE verdict = 'reject') AS reject"
        " FROM validation_reports WHERE created_at >= $2 GROUP BY 1 ORDER BY 1",
        step_s,
        since,
    )
    return _rows(rows)

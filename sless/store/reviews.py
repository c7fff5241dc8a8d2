"""The provider's review queue: uploads whose validation verdict was ``review``.

A row is the audit record of the decision too: who approved or rejected what, when, why.
A newer upload of the same function supersedes a pending review.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from sless.errors import Conflict, NotFound


class ReviewRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def open(self, namespace: str, function: str, sha256: str, report: dict[str, Any]) -> int:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "UPDATE reviews SET state = 'superseded', decided_at = now()"
                " WHERE namespace = $1 AND function = $2 AND state = 'pending'",
                namespace,
                function,
            )
            review_id: int = await conn.fetchval(
                "INSERT INTO reviews (namespace, function, sha256, report)"
                " VALUES ($1, $2, $3, $4) RETURNING id",
                namespace,
                function,
                sha256,
                report,
            )
        return review_id

    async def list(
        self, state: str | None = "pending", *, after: int | None = None, limit: int = 500
    ) -> list[dict[str, Any]]:
        """Pending reviews oldest first (the order to decide them); all, newest first.
        ``after`` is the id of the last review of the previous page (a keyset page)."""
        args: list[Any] = []
        where: list[str] = []
        if state is not None:
            args.append(state)
            where.append(f"state = ${len(args)}")
        if after is not None:
            args.append(after)
            where.append(f"id {'>' if state == 'pending' else '<'} ${len(args)}")
        args.append(limit)
        order = "id" if state == "pending" else "id DESC"
        sql = "SELECT * FROM reviews"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {order} LIMIT ${len(args)}"
        rows = await self.pool.fetch(sql, *args)
        return [dict(r.items()) for r in rows]

    async def get(self, review_id: int) -> dict[str, Any]:
        row = await self.pool.fetchrow("SELECT * FROM reviews WHERE id = $1", review_id)
        if row is None:
            raise NotFound(f"review {review_id} not found")
        return dict(row.items())

    async def decide(
        self, review_id: int, *, approve: bool, reason: str, by: str
    ) -> dict[str, Any]:
        """Record the decision on a pending review; a decided one is a Conflict."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow("SELECT * FROM reviews WHERE id = $1 FOR UPDATE", review_id)
            if row is None:
                raise NotFound(f"review {review_id} not found")
            if row["state"] != "pending":
                raise Conflict(f"review {review_id} is already {row['state']}")
            updated = await conn.fetchrow(
                "UPDATE reviews SET state = $2, reason = $3, decided_by = $4, decided_at = now()"
                " WHERE id = $1 RETURNING *",
                review_id,
                "approved" if approve else "rejected",
                reason[:1000],
                by,
            )
        return dict(updated.items())

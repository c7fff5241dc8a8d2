"""Idempotency-Key records (the logic is ``sless.gateway.idempotency``).

A row is claimed by inserting ``(namespace, key_digest)``: the primary key lets exactly
one of any number of concurrent requests (in any gateway process) own a key. Rows older
than the TTL are purged on the next claim of the same namespace, and a namespace keeps at
most ``max_keys`` rows (the oldest go first), so the table stays bounded per tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

#: a claim whose request never finished (its gateway stopped) is given up after this
_STALE_RUNNING_S = 15 * 60


@dataclass(frozen=True)
class IdempotencyRow:
    operation: str
    request_digest: bytes
    state: str
    status: int | None
    response: bytes | None


class IdempotencyRepository:
    def __init__(self, pool: asyncpg.Pool, *, ttl_s: int, max_keys: int) -> None:
        self.pool = pool
        self.ttl_s = ttl_s
        self.max_keys = max_keys

    async def count(self, namespace: str) -> int:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM idempotency_keys WHERE namespace = $1", namespace
        )
        return int(value)

    async def claim(
        self, namespace: str, key_digest: bytes, operation: str, request_digest: bytes
    ) -> IdempotencyRow | None:
        """Claim the key: None when this caller owns it now, else the existing row."""
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM idempotency_keys WHERE namespace = $1"
                " AND (created_at < now() - make_interval(secs => $2)"
                "      OR (state = 'running' AND created_at < now() - make_interval(secs => $3)))",
                namespace,
                float(self.ttl_s),
                float(_STALE_RUNNING_S),
            )
            inserted = await conn.fetchval(
                "INSERT INTO idempotency_keys (namespace, key_digest, operation, request_digest)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING true",
                namespace,
                key_digest,
                operation,
                request_digest,
            )
            if inserted:
                await conn.execute(
                    "DELETE FROM idempotency_keys WHERE namespace = $1 AND key_digest IN ("
                    " SELECT key_digest FROM idempotency_keys WHERE namespace = $1"
                    " ORDER BY created_at DESC, key_digest OFFSET $2)",
                    namespace,
                    self.max_keys,
                )
                return None
            row = await conn.fetchrow(
                "SELECT operation, request_digest, state, status, response"
                " FROM idempotency_keys WHERE namespace = $1 AND key_digest = $2",
                namespace,
                key_digest,
            )
        if row is None:  # deleted between the insert and the read: claim again
            return await self.claim(namespace, key_digest, operation, request_digest)
        return IdempotencyRow(
            operation=row["operation"],
            request_digest=bytes(row["request_digest"]),
            state=row["state"],
            status=row["status"],
            response=bytes(row["response"]) if row["response"] is not None else None,
        )

    async def complete(
        self, namespace: str, key_digest: bytes, status: int, response: bytes
    ) -> None:
        await self.pool.execute(
            "UPDATE idempotency_keys SET state = 'done', status = $3, response = $4"
            " WHERE namespace = $1 AND key_digest = $2",
            namespace,
            key_digest,
            status,
            response,
        )

    async def release(self, namespace: str, key_digest: bytes) -> None:
        """Forget a claim whose request failed: a retry does the work again."""
        await self.pool.execute(
            "DELETE FROM idempotency_keys WHERE namespace = $1 AND key_digest = $2"
            " AND state = 'running'",
            namespace,
            key_digest,
        )

    async def delete_namespace(self, namespace: str) -> None:
        """Forget a removed tenant's keys: a tenant created again under the same name
        must never replay its predecessor's answers."""
        await self.pool.execute("DELETE FROM idempotency_keys WHERE namespace = $1", namespace)

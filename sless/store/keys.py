"""The platform's signing key, generated once and kept in PostgreSQL.

Paging cursors are HMAC-signed and stored idempotent responses are sealed with keys
derived from it. Every gateway of one database reads the same key, so a cursor issued by
one replica is accepted by the next. A provider who wants to rotate or pin it sets
``SLESS_GATEWAY_SIGNING_KEY`` instead (then this table is not read).
"""

from __future__ import annotations

import secrets

import asyncpg


async def signing_key(pool: asyncpg.Pool, name: str = "api") -> bytes:
    """The key called ``name``; the first caller creates it (concurrent callers agree)."""
    await pool.execute(
        "INSERT INTO signing_keys (name, key) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
        name,
        secrets.token_bytes(32),
    )
    key: bytes = await pool.fetchval("SELECT key FROM signing_keys WHERE name = $1", name)
    return bytes(key)

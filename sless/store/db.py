"""Connection pool and schema migrations.

Migrations are the numbered ``migrations/NNNN_*.sql`` files, applied in order inside one
transaction each, under an advisory lock so that several gateways starting at once apply
each migration exactly once.
"""

from __future__ import annotations

import errno
import json
import re
from importlib import resources
from typing import Any

import asyncpg

_MIGRATION_LOCK = 0x51E55  # advisory lock key: "sless"
_MIGRATION_FILE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def _connect(*args: Any, **kwargs: Any) -> asyncpg.Connection:
    """``asyncpg.connect``; a server whose Unix socket is missing (restarting, or killed and
    not back yet) is refusing connections, as a server that answers with RST would: a
    ``ConnectionRefusedError`` (the callers' "database unavailable", 503), not a bare
    ``FileNotFoundError`` (which they cannot tell from a missing file of their own)."""
    try:
        connection: asyncpg.Connection = await asyncpg.connect(*args, **kwargs)
    except FileNotFoundError as e:
        raise ConnectionRefusedError(
            errno.ECONNREFUSED, "the database's Unix socket is missing (server down)"
        ) from e
    return connection


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    pool: asyncpg.Pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
        command_timeout=30,
        connect=_connect,
    )
    return pool


def _migrations() -> list[tuple[int, str]]:
    found = []
    for entry in resources.files("sless.store.migrations").iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.read_text(encoding="utf-8")))
    return sorted(found)


async def migrate(pool: asyncpg.Pool) -> list[int]:
    """Apply the migrations not applied yet; return the versions applied now."""
    applied_now: list[int] = []
    async with pool.acquire() as conn:
        await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        try:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
            for version, sql in _migrations():
                if version in done:
                    continue
                async with conn.transaction():
                    await conn.execute(sql)
                    await conn.execute(
                        "INSERT INTO schema_migrations (version) VALUES ($1)", version
                    )
                applied_now.append(version)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    return applied_now


def row_to_dict(row: Any) -> dict[str, Any]:
    return dict(row.items())


def resource_version_of(row: Any) -> str | None:
    """A row's ``resource_version`` as the API shows it (a string, as in Kubernetes)."""
    value = row.get("resource_version") if hasattr(row, "get") else None
    return str(value) if value is not None else None

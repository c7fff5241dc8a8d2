"""Tenant secrets: written and deleted through the API, read back only by the platform.

A secret's value is a ``SecretStr`` from the moment it leaves the request body: its
``repr``/``str`` are masked, so it can reach no log line or exception message by
accident. ``SecretInfo`` (what the API lists) has no value at all. The value is read only
by ``reveal``, which the event consumers call to open a broker connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from pydantic import SecretStr

from sless.errors import NotFound
from sless.store.db import resource_version_of


@dataclass(frozen=True, slots=True)
class SecretInfo:
    """A secret without its value: what the API may show."""

    namespace: str
    name: str
    created_at: datetime
    updated_at: datetime
    resource_version: str | None = None

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "resource_version": self.resource_version,
        }


def _info(row: Any) -> SecretInfo:
    return SecretInfo(
        row["namespace"],
        row["name"],
        row["created_at"],
        row["updated_at"],
        resource_version_of(row),
    )


class SecretRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put(self, namespace: str, name: str, value: SecretStr) -> tuple[SecretInfo, bool]:
        """Create or replace; returns the secret (without value) and whether it was created."""
        row = await self.pool.fetchrow(
            """
            INSERT INTO secrets (namespace, name, value) VALUES ($1, $2, $3)
            ON CONFLICT (namespace, name) DO UPDATE
               SET value = EXCLUDED.value, updated_at = now()
            RETURNING namespace, name, created_at, updated_at, resource_version,
                      (xmax = 0) AS created
            """,
            namespace,
            name,
            value.get_secret_value(),
        )
        return _info(row), bool(row["created"])

    async def get(self, namespace: str, name: str) -> SecretInfo:
        row = await self.pool.fetchrow(
            "SELECT namespace, name, created_at, updated_at, resource_version FROM secrets"
            " WHERE namespace = $1 AND name = $2",
            namespace,
            name,
        )
        if row is None:
            raise NotFound(f"secret {name!r} not found")
        return _info(row)

    async def list_all(self, namespace: str) -> list[SecretInfo]:
        rows = await self.pool.fetch(
            "SELECT namespace, name, created_at, updated_at, resource_version FROM secrets"
            " WHERE namespace = $1 ORDER BY name",
            namespace,
        )
        return [_info(r) for r in rows]

    async def reveal(self, namespace: str, name: str) -> tuple[SecretStr, datetime]:
        """The value (masked in every repr) and when it was last written."""
        row = await self.pool.fetchrow(
            "SELECT value, updated_at FROM secrets WHERE namespace = $1 AND name = $2",
            namespace,
            name,
        )
        if row is None:
            raise NotFound(f"secret {name!r} not found")
        return SecretStr(row["value"]), row["updated_at"]

    async def delete(self, namespace: str, name: str) -> None:
        result = await self.pool.execute(
            "DELETE FROM secrets WHERE namespace = $1 AND name = $2", namespace, name
        )
        if result == "DELETE 0":
            raise NotFound(f"secret {name!r} not found")

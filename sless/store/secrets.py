"""Tenant secrets: written and deleted through the API, read back only by the platform.

A secret's value is a ``SecretStr`` from the moment it leaves the request body: its
``repr``/``str`` are masked, so it can reach no log line or exception message by
accident. ``SecretInfo`` (what the API lists) has no value at all. The value is read only
by ``reveal`` (the event consumers opening a broker connection, the callback signer) and
``reveal_many`` (a function's ``secrets`` given to its workers or pods).

Values are encrypted at rest (``sless.store.crypto``: AES-256-GCM, a key id per row, the
associated data ``namespace/name``); ``reencrypt`` moves rows still under an old key, or
still plaintext from before encryption, to the primary key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg
from pydantic import SecretStr

from sless.errors import NotFound
from sless.store.crypto import SEAL_OVERHEAD, SecretCipher
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


def _associated(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


class SecretRepository:
    def __init__(self, pool: asyncpg.Pool, cipher: SecretCipher) -> None:
        self.pool = pool
        self.cipher = cipher

    def _open(self, row: Any) -> SecretStr:
        if row["key_id"] is None:  # written before encryption; reencrypt() seals it
            return SecretStr(row["value"])
        return self.cipher.decrypt(
            _associated(row["namespace"], row["name"]), row["key_id"], bytes(row["sealed"])
        )

    async def put(self, namespace: str, name: str, value: SecretStr) -> tuple[SecretInfo, bool]:
        """Create or replace; returns the secret (without value) and whether it was created."""
        row = await self.pool.fetchrow(
            """
            INSERT INTO secrets (namespace, name, value, key_id, sealed)
            VALUES ($1, $2, NULL, $3, $4)
            ON CONFLICT (namespace, name) DO UPDATE
               SET value = NULL, key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed,
                   updated_at = clock_timestamp()
            RETURNING namespace, name, created_at, updated_at, resource_version,
                      (xmax = 0) AS created
            """,
            namespace,
            name,
            *self.cipher.encrypt(_associated(namespace, name), value),
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

    async def usage(self, namespace: str) -> dict[str, int]:
        """``{name: size of its value in bytes}`` of the namespace's secrets (quotas)."""
        rows = await self.pool.fetch(
            "SELECT name, coalesce(octet_length(sealed) - $2, octet_length(value)) AS size"
            " FROM secrets WHERE namespace = $1",
            namespace,
            SEAL_OVERHEAD,
        )
        return {r["name"]: max(0, int(r["size"])) for r in rows}

    async def reveal(self, namespace: str, name: str) -> tuple[SecretStr, datetime]:
        """The value (masked in every repr) and when it was last written."""
        row = await self.pool.fetchrow(
            "SELECT namespace, name, value, key_id, sealed, updated_at FROM secrets"
            " WHERE namespace = $1 AND name = $2",
            namespace,
            name,
        )
        if row is None:
            raise NotFound(f"secret {name!r} not found")
        return self._open(row), row["updated_at"]

    async def reveal_many(
        self, namespace: str, names: list[str]
    ) -> dict[str, tuple[SecretStr, datetime]]:
        """The values (and last write times) of those of ``names`` that exist."""
        rows = await self.pool.fetch(
            "SELECT namespace, name, value, key_id, sealed, updated_at FROM secrets"
            " WHERE namespace = $1 AND name = ANY($2::text[])",
            namespace,
            names,
        )
        return {r["name"]: (self._open(r), r["updated_at"]) for r in rows}

    async def missing(self, namespace: str, names: list[str]) -> list[str]:
        """Those of ``names`` that are no secret of ``namespace`` (sorted)."""
        rows = await self.pool.fetch(
            "SELECT name FROM secrets WHERE namespace = $1 AND name = ANY($2::text[])",
            namespace,
            names,
        )
        found = {r["name"] for r in rows}
        return sorted(set(names) - found)

    async def stamps(self, namespace: str, names: list[str]) -> dict[str, datetime]:
        """When each existing one of ``names`` was last written: no value is read."""
        rows = await self.pool.fetch(
            "SELECT name, updated_at FROM secrets WHERE namespace = $1 AND name = ANY($2::text[])",
            namespace,
            names,
        )
        return {r["name"]: r["updated_at"] for r in rows}

    async def reencrypt(self) -> int:
        """Seal every value not under the primary key (plaintext or an old key) with it.

        Returns how many rows it rewrote. ``updated_at`` is left as it is: the value did
        not change, so nothing that uses it restarts.
        """
        primary = self.cipher.primary
        rows = await self.pool.fetch(
            "SELECT namespace, name, value, key_id, sealed FROM secrets"
            " WHERE key_id IS DISTINCT FROM $1",
            primary,
        )
        for row in rows:
            namespace, name = row["namespace"], row["name"]
            key_id, sealed = self.cipher.encrypt(_associated(namespace, name), self._open(row))
            await self.pool.execute(
                "UPDATE secrets SET value = NULL, key_id = $3, sealed = $4"
                " WHERE namespace = $1 AND name = $2 AND key_id IS NOT DISTINCT FROM $5",
                namespace,
                name,
                key_id,
                sealed,
                row["key_id"],
            )
        return len(rows)

    async def delete(self, namespace: str, name: str) -> None:
        result = await self.pool.execute(
            "DELETE FROM secrets WHERE namespace = $1 AND name = $2", namespace, name
        )
        if result == "DELETE 0":
            raise NotFound(f"secret {name!r} not found")

"""Tenants and their tokens (stored as SHA-256 digests, never in clear)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from sless.errors import Conflict, NotFound


@dataclass(frozen=True)
class TenantRow:
    name: str
    namespace: str
    created_at: datetime


@dataclass(frozen=True)
class TokenRow:
    id: int
    kind: str
    tenant: str | None
    description: str
    created_at: datetime
    revoked_at: datetime | None


class TenantRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def create(self, name: str, namespace: str, first_token_digest: bytes) -> TenantRow:
        async with self.pool.acquire() as conn, conn.transaction():
            try:
                row = await conn.fetchrow(
                    "INSERT INTO tenants (name, namespace) VALUES ($1, $2) RETURNING *",
                    name,
                    namespace,
                )
            except asyncpg.UniqueViolationError as e:
                raise Conflict(f"tenant {name!r} already exists") from e
            await conn.execute(
                "INSERT INTO tokens (kind, tenant, digest, description)"
                " VALUES ('tenant', $1, $2, 'first token')",
                name,
                first_token_digest,
            )
        return TenantRow(**dict(row.items()))

    async def get(self, name: str) -> TenantRow:
        row = await self.pool.fetchrow("SELECT * FROM tenants WHERE name = $1", name)
        if row is None:
            raise NotFound(f"tenant {name!r} not found")
        return TenantRow(**dict(row.items()))

    async def list(self) -> list[TenantRow]:
        rows = await self.pool.fetch("SELECT * FROM tenants ORDER BY name")
        return [TenantRow(**dict(r.items())) for r in rows]

    async def delete(self, name: str) -> None:
        result = await self.pool.execute("DELETE FROM tenants WHERE name = $1", name)
        if result == "DELETE 0":
            raise NotFound(f"tenant {name!r} not found")


class TenantLimitsRepository:
    """The quotas the provider set per tenant (``{"max_triggers": 5, ...}``)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self, tenant: str) -> dict[str, int]:
        value = await self.pool.fetchval(
            "SELECT limits FROM tenant_limits WHERE tenant = $1", tenant
        )
        return dict(json.loads(value)) if value is not None else {}

    async def all(self) -> dict[str, dict[str, int]]:
        rows = await self.pool.fetch("SELECT tenant, limits FROM tenant_limits")
        return {r["tenant"]: dict(json.loads(r["limits"])) for r in rows}

    async def put(self, tenant: str, limits: dict[str, int]) -> None:
        try:
            await self.pool.execute(
                "INSERT INTO tenant_limits (tenant, limits) VALUES ($1, $2::jsonb)"
                " ON CONFLICT (tenant) DO UPDATE SET limits = EXCLUDED.limits,"
                " updated_at = now()",
                tenant,
                json.dumps(limits),
            )
        except asyncpg.ForeignKeyViolationError as e:
            raise NotFound(f"tenant {tenant!r} not found") from e


class TokenRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def add(
        self, digest: bytes, *, kind: str, tenant: str | None, description: str = ""
    ) -> TokenRow:
        row = await self.pool.fetchrow(
            "INSERT INTO tokens (kind, tenant, digest, description) VALUES ($1, $2, $3, $4)"
            " RETURNING id, kind, tenant, description, created_at, revoked_at",
            kind,
            tenant,
            digest,
            description,
        )
        return TokenRow(**dict(row.items()))

    async def find_active(self, digest: bytes) -> tuple[TokenRow, bytes] | None:
        """Look a token up by its digest.

        The lookup is an index equality on a SHA-256 digest of a 256-bit secret: its timing
        can at most reveal a prefix of a *digest*, which says nothing usable about any
        secret. The stored digest is returned so that the caller compares it in constant time.
        """
        row = await self.pool.fetchrow(
            "SELECT id, kind, tenant, description, created_at, revoked_at, digest FROM tokens"
            " WHERE digest = $1 AND revoked_at IS NULL",
            digest,
        )
        if row is None:
            return None
        values = dict(row.items())
        stored: bytes = values.pop("digest")
        return TokenRow(**values), stored

    async def has_admin(self) -> bool:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM tokens WHERE kind = 'admin' AND revoked_at IS NULL"
        )
        return bool(value)

    async def revoke_other_configured(self, digest: bytes) -> int:
        """Revoke the admin tokens once set by hand, except ``digest``: rotation by restart."""
        result: str = await self.pool.execute(
            "UPDATE tokens SET revoked_at = now()"
            " WHERE kind = 'admin' AND description = 'configured' AND digest <> $1"
            " AND revoked_at IS NULL",
            digest,
        )
        return int(result.rsplit(" ", 1)[-1])

    async def list_for_tenant(self, tenant: str) -> list[TokenRow]:
        rows = await self.pool.fetch(
            "SELECT id, kind, tenant, description, created_at, revoked_at FROM tokens"
            " WHERE tenant = $1 ORDER BY id",
            tenant,
        )
        return [TokenRow(**dict(r.items())) for r in rows]

    async def count_active(self, tenant: str) -> int:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM tokens WHERE tenant = $1 AND revoked_at IS NULL", tenant
        )
        return int(value)

    async def revoke(self, tenant: str, token_id: int) -> None:
        result = await self.pool.execute(
            "UPDATE tokens SET revoked_at = now()"
            " WHERE id = $1 AND tenant = $2 AND revoked_at IS NULL",
            token_id,
            tenant,
        )
        if result == "UPDATE 0":
            raise NotFound(f"token {token_id} not found")

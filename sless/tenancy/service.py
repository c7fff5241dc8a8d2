"""Tenancy: onboarding tenants, minting and checking tokens, resolving a caller.

Every authenticated request is resolved once to a ``Principal``; the namespace in a path
is then compared with the principal's namespace in one place (gateway/deps.py).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import asyncpg

from sless.errors import Unauthorized
from sless.models import check_tenant_name, namespace_for
from sless.store import TenantRepository, TenantRow, TokenRepository, TokenRow
from sless.tenancy.tokens import digests_equal, generate_token, token_digest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Principal:
    """Who is calling: a tenant (with its namespace) or the provider admin."""

    kind: str  # "tenant" | "admin"
    tenant: str | None
    namespace: str | None
    token_id: int

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"


@dataclass(frozen=True)
class NewTenant:
    tenant: TenantRow
    token: str

    def __repr__(self) -> str:  # the token must never end up in a log through repr
        return f"NewTenant(tenant={self.tenant.name!r}, token='…')"


@dataclass(frozen=True)
class NewToken:
    row: TokenRow
    token: str

    def __repr__(self) -> str:
        return f"NewToken(id={self.row.id}, token='…')"


#: how long a resolved token is trusted without asking the database again; a revocation
#: reaches other gateway processes within this time
_CACHE_TTL_S = 5.0
_CACHE_MAX = 10_000


class Tenancy:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.tenants = TenantRepository(pool)
        self.tokens = TokenRepository(pool)
        self._cache: dict[bytes, tuple[Principal, float]] = {}

    def forget_cached(self) -> None:
        self._cache.clear()

    async def onboard(self, name: str) -> NewTenant:
        check_tenant_name(name)
        token = generate_token("tenant")
        row = await self.tenants.create(name, namespace_for(name), token_digest(token))
        log.info("onboarded tenant %s (namespace %s)", row.name, row.namespace)
        return NewTenant(tenant=row, token=token)

    async def mint_token(self, tenant: str, description: str = "") -> NewToken:
        await self.tenants.get(tenant)
        token = generate_token("tenant")
        row = await self.tokens.add(
            token_digest(token), kind="tenant", tenant=tenant, description=description[:200]
        )
        return NewToken(row=row, token=token)

    async def ensure_admin_token(self, configured: str | None) -> str | None:
        """Make sure a provider admin token exists.

        With a configured token, its digest is registered (idempotently). Without one, a
        token is generated on the very first start and returned so that the caller can
        print it once; later starts return None.
        """
        if configured:
            digest = token_digest(configured)
            if await self.tokens.find_active(digest) is None:
                await self.tokens.add(digest, kind="admin", tenant=None, description="configured")
            return None
        if await self.tokens.has_admin():
            return None
        token = generate_token("admin")
        await self.tokens.add(
            token_digest(token), kind="admin", tenant=None, description="generated"
        )
        return token

    async def authenticate(self, token: str | None) -> Principal:
        if not token:
            raise Unauthorized("missing bearer token")
        digest = token_digest(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        found = await self.tokens.find_active(digest)
        if found is None or not digests_equal(digest, found[1]):
            raise Unauthorized("invalid token")
        row = found[0]
        namespace = namespace_for(row.tenant) if row.tenant else None
        principal = Principal(
            kind=row.kind, tenant=row.tenant, namespace=namespace, token_id=row.id
        )
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[digest] = (principal, now + _CACHE_TTL_S)
        return principal

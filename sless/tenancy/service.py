"""Tenancy: onboarding tenants, minting and checking tokens, resolving a caller.

Every authenticated request is resolved once to a ``Principal``; the namespace in a path
is then compared with the principal's namespace in one place (gateway/deps.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncpg

from sless.config import AuthSettings, LimitsSettings
from sless.errors import Conflict, NotFound, Unauthorized
from sless.models import (
    MAX_TENANT_NAME_LENGTH,
    check_tenant_name,
    is_dns1123_label,
    namespace_for,
)
from sless.store import TenantRepository, TenantRow, TokenRepository, TokenRow
from sless.tenancy.limits import Limits
from sless.tenancy.providers import Identity, Provider, make_providers
from sless.tenancy.quotas import Quotas
from sless.tenancy.tokens import TOKEN_PREFIX, digests_equal, generate_token, token_digest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Principal:
    """Who is calling: a tenant (with its namespace) or the provider admin."""

    kind: str  # "tenant" | "admin"
    tenant: str | None
    namespace: str | None
    token_id: int  # 0 for a cloud identity (no platform token)
    via: str = "static"  # the auth provider that vouched for the caller

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
    def __init__(
        self,
        pool: asyncpg.Pool,
        auth: AuthSettings | None = None,
        limits: LimitsSettings | None = None,
        *,
        provision: Callable[[str], Awaitable[None]] | None = None,
        tenant_limits: Callable[[str], Awaitable[dict[str, int]]] | None = None,
    ) -> None:
        self.pool = pool
        self.tenants = TenantRepository(pool)
        self.tokens = TokenRepository(pool)
        self._cache: dict[bytes, tuple[Principal, float]] = {}
        #: digest of the hand-set admin token (``SLESS_ADMIN_TOKEN``), whatever its format
        self._configured_digest = b""
        #: makes the mode's per-tenant infrastructure before a tenant is stored (the
        #: gateway passes its backend's ``provision_tenant``); must be idempotent
        self.provision = provision
        #: the mode's own per-tenant limits (the backend's ``tenant_limits``), for quotas
        self._tenant_limits = tenant_limits
        self.configure(auth or AuthSettings(), limits or LimitsSettings())

    def configure(self, auth: AuthSettings, limits: LimitsSettings) -> None:
        """Use these auth providers and limits (the gateway calls this once, at start)."""
        self.auth = auth
        self.providers: list[Provider | None] = make_providers(auth)
        self.limits = Limits(limits)
        self.quotas = Quotas(self.pool, limits, external=self._tenant_limits)
        self._cache.clear()

    def forget_cached(self) -> None:
        self._cache.clear()

    async def onboard(self, name: str) -> NewTenant:
        check_tenant_name(name)
        if self.provision is not None:
            await self.provision(name)
        token = generate_token("tenant")
        row = await self.tenants.create(name, namespace_for(name), token_digest(token))
        log.info("onboarded tenant %s (namespace %s)", row.name, row.namespace)
        return NewTenant(tenant=row, token=token)

    async def mint_token(self, tenant: str, description: str = "") -> NewToken:
        """A new token of ``tenant``; refused past its ``tokens`` quota (counted under the
        tenant's write lock, so concurrent mints cannot all take the last one)."""
        await self.tenants.get(tenant)
        token = generate_token("tenant")
        async with self.quotas.guard(namespace_for(tenant)) as quota:
            held = await self.tokens.count_active(tenant)
            quota.check("tokens", held, held + 1)
            row = await self.tokens.add(
                token_digest(token), kind="tenant", tenant=tenant, description=description[:200]
            )
        return NewToken(row=row, token=token)

    async def ensure_admin_token(self, configured: str | None) -> str | None:
        """Make sure a provider admin token exists.

        With a configured token, its digest is registered (idempotently) and any other
        token configured before is revoked, so rotating means restarting with a new
        ``SLESS_ADMIN_TOKEN``. Without one, a
        token is generated on the very first start and returned so that the caller can
        print it once; later starts return None.
        """
        if configured:
            digest = token_digest(configured)
            # a token chosen by hand need not carry the ``sl_`` prefix: recognise it as ours
            self._configured_digest = digest
            if await self.tokens.find_active(digest) is None:
                await self.tokens.add(digest, kind="admin", tenant=None, description="configured")
            # a changed SLESS_ADMIN_TOKEN replaces the one set before; a generated token stays
            if revoked := await self.tokens.revoke_other_configured(digest):
                log.warning("revoked %d admin token(s) set by hand before this one", revoked)
            return None
        if await self.tokens.has_admin():
            return None
        token = generate_token("admin")
        await self.tokens.add(
            token_digest(token), kind="admin", tenant=None, description="generated"
        )
        return token

    async def authenticate_from(self, token: str | None, address: str) -> Principal:
        """``authenticate``, with failed attempts rate-limited per client address."""
        if token:
            self.limits.check_address(address)
        try:
            return await self.authenticate(token)
        except Unauthorized:
            if token:
                self.limits.failed_attempt(address)
            raise

    def authenticated_now(self, token: str, address: str) -> Principal | None:
        """``authenticate_from`` without waiting: the principal of a token resolved in
        the last few seconds, else None (then ``authenticate_from``, which may refuse).
        None too when ``address`` is braked: that refusal is ``authenticate_from``'s."""
        if self.limits.failed_auth.wait(address):
            return None
        cached = self._cache.get(token_digest(token))
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        return None

    async def authenticate(self, token: str | None) -> Principal:
        """Resolve a token with the configured providers, tried in order."""
        if not token:
            raise Unauthorized("missing bearer token")
        digest = token_digest(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        principal: Principal | None = None
        for provider in self.providers:
            if provider is None:
                if token.startswith(TOKEN_PREFIX) or digests_equal(digest, self._configured_digest):
                    principal = await self._static(digest)
            elif provider.recognises(token):
                identity = await provider.verify(token)
                if identity is not None:
                    principal = await self._cloud(identity)
            if principal is not None:
                break
        if principal is None:
            raise Unauthorized("invalid token")
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[digest] = (principal, now + _CACHE_TTL_S)
        return principal

    async def _static(self, digest: bytes) -> Principal | None:
        found = await self.tokens.find_active(digest)
        if found is None or not digests_equal(digest, found[1]):
            return None
        row = found[0]
        namespace = namespace_for(row.tenant) if row.tenant else None
        return Principal(kind=row.kind, tenant=row.tenant, namespace=namespace, token_id=row.id)

    async def _cloud(self, identity: Identity) -> Principal:
        """The tenant a cloud identity names in the configured claim (onboarded if allowed)."""
        name = identity.claims.get(self.auth.tenant_claim)
        if not isinstance(name, str) or not is_dns1123_label(name, MAX_TENANT_NAME_LENGTH):
            raise Unauthorized(f"the token's {self.auth.tenant_claim!r} claim names no tenant")
        try:
            await self.tenants.get(name)
        except NotFound:
            if not self.auth.auto_onboard:
                raise Unauthorized("unknown tenant") from None
            await self._onboard_cloud(name)
        return Principal(
            kind="tenant",
            tenant=name,
            namespace=namespace_for(name),
            token_id=0,
            via=identity.provider,
        )

    async def _onboard_cloud(self, name: str) -> None:
        """Provider-managed onboarding: the tenant, and no platform token to show.

        Concurrent first requests (in this process or others) race on the tenants table's
        primary key: exactly one INSERT wins, the others see ``Conflict`` and go on.
        """
        check_tenant_name(name)
        if self.provision is not None:
            await self.provision(name)
        # the first token's secret is discarded unseen, then the token revoked: a cloud
        # tenant has no static token until an admin mints one
        try:
            await self.tenants.create(
                name, namespace_for(name), token_digest(generate_token("tenant"))
            )
        except Conflict:
            return
        for row in await self.tokens.list_for_tenant(name):
            await self.tokens.revoke(name, row.id)
        log.info("auto-onboarded tenant %s (namespace %s)", name, namespace_for(name))

"""Onboarding, tokens at rest, revocation and tenant deletion against real PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib

import asyncpg
import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration


def test_tokens_are_stored_only_as_sha256(gateway: RunningGateway, database_url: str) -> None:
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    token = created["token"]
    assert created["namespace"] == "sless-acme"
    assert len(token) > 40

    async def stored() -> list[bytes]:
        conn = await asyncpg.connect(database_url)
        try:
            rows = await conn.fetch("SELECT digest FROM tokens WHERE tenant = 'acme'")
            dump = await conn.fetchval("SELECT string_agg(t::text, ' ') FROM tokens t")
        finally:
            await conn.close()
        assert token not in dump
        return [bytes(r["digest"]) for r in rows]

    assert asyncio.run(stored()) == [hashlib.sha256(token.encode()).digest()]


def test_mint_list_and_revoke_tokens(gateway: RunningGateway) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    minted = gateway.admin.post("/v1/admin/tenants/acme/tokens", json={"description": "ci"})
    assert minted.status_code == 201
    second = gateway.client(minted.json()["token"])
    assert second.get("/v1/whoami").json()["tenant"] == "acme"
    listed = gateway.admin.get("/v1/admin/tenants/acme/tokens").json()
    assert [t["description"] for t in listed["tokens"]] == ["first token", "ci"]
    assert "token" not in listed["tokens"][0]
    revoked = gateway.admin.delete(f"/v1/admin/tenants/acme/tokens/{minted.json()['id']}")
    assert revoked.status_code == 200
    assert second.get("/v1/whoami").status_code == 401


def test_delete_tenant_removes_functions_and_tokens(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    code = {"handler.py": "def handle(event, context):\n    return 'bye'\n"}
    deploy(acme, "sless-acme", "f", code)
    assert httpx.get(f"{gateway.url}/fn/sless-acme/f").status_code == 200
    assert gateway.admin.delete("/v1/admin/tenants/acme").status_code == 200
    assert acme.get("/v1/whoami").status_code == 401
    assert httpx.get(f"{gateway.url}/fn/sless-acme/f").status_code == 404
    names = [t["tenant"] for t in gateway.admin.get("/v1/admin/tenants").json()["tenants"]]
    assert "acme" not in names
    assert gateway.admin.delete("/v1/admin/tenants/acme").status_code == 404


def test_generated_admin_token_is_returned_once(database_url: str) -> None:
    from sless.store import create_pool, migrate
    from sless.tenancy import Tenancy

    async def scenario() -> tuple[str | None, str | None]:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            tenancy = Tenancy(pool)
            first = await tenancy.ensure_admin_token(None)
            second = await tenancy.ensure_admin_token(None)
            assert first is not None
            principal = await tenancy.authenticate(first)
            assert principal.is_admin
            return first, second
        finally:
            await pool.close()

    first, second = asyncio.run(scenario())
    assert first
    assert first.startswith("sl_a_")
    assert second is None


def test_a_hand_set_admin_token_without_the_sl_prefix_works(database_url: str) -> None:
    """Defect: ``SLESS_ADMIN_TOKEN=<anything>`` started cleanly, then every call got 401."""
    from sless.store import create_pool, migrate
    from sless.tenancy import Tenancy

    chosen = "my-own-secret-for-the-admin-0123456789"

    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            tenancy = Tenancy(pool)
            assert await tenancy.ensure_admin_token(chosen) is None
            principal = await tenancy.authenticate(chosen)
            assert principal.is_admin
            with pytest.raises(Exception, match="invalid token"):
                await tenancy.authenticate(chosen[:-1] + "X")
            # rotation: a restart with another token revokes the one configured before
            rotated = "another-hand-set-admin-token-9876543210"
            restarted = Tenancy(pool)
            await restarted.ensure_admin_token(rotated)
            assert (await restarted.authenticate(rotated)).is_admin
            with pytest.raises(Exception, match="invalid token"):
                await restarted.authenticate(chosen)
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_secrets_do_not_appear_in_reprs() -> None:
    from datetime import UTC, datetime

    from sless.config import Settings
    from sless.store import TenantRow
    from sless.tenancy.service import NewTenant

    created = NewTenant(TenantRow("acme", "sless-acme", datetime.now(UTC)), "sl_t_SECRETSECRET")
    assert "SECRETSECRET" not in repr(created)
    token = "sl_a_TOPSECRET" + "x" * 30
    settings = Settings(_env_file=None, admin={"token": token})  # type: ignore[call-arg]
    assert "TOPSECRET" not in repr(settings)
    assert "TOPSECRET" not in str(settings.model_dump())

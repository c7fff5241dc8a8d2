"""Cloud tokens against a real local issuer: authlib keys, a JWKS and an RFC 7662
introspection endpoint served over HTTP on loopback, and the real gateway."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import asyncpg
import httpx
import pytest
from pydantic import SecretStr

from sless.config import AuthSettings, Settings
from sless.tenancy import IntrospectionProvider
from tests.conftest import RunningGateway

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # authlib.jose announces its move to joserfc
    from authlib.jose import JsonWebKey, JsonWebToken

pytestmark = pytest.mark.integration

AUDIENCE = "sless"
CLIENT_ID = "sless-gateway"
CLIENT_SECRET = "introspection-secret-" + "z" * 16
REFRESH_S = 1.0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """A tiny identity provider: signing keys, ``/jwks`` and ``/introspect``."""

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.jwks_requests = 0
        self.introspection_requests = 0
        self.active: dict[str, dict[str, Any]] = {}
        self.add_key("k1")
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path != "/jwks":
                    self._send(404, {})
                    return
                issuer.jwks_requests += 1
                self._send(200, {"keys": [k.as_dict(is_private=False) for k in issuer.keys]})

            def do_POST(self) -> None:
                expected = (
                    "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                )
                if self.path != "/introspect" or self.headers.get("authorization") != expected:
                    self._send(401, {"error": "invalid_client"})
                    return
                issuer.introspection_requests += 1
                length = int(self.headers.get("content-length", "0"))
                form = parse_qs(self.rfile.read(length).decode())
                token = form.get("token", [""])[0]
                claims = issuer.active.get(token)
                self._send(200, {"active": True, **claims} if claims else {"active": False})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def add_key(self, kid: str) -> Any:
        key = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": kid})
        self.keys.append(key)
        return key

    def claims(self, tenant: str, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": AUDIENCE,
            "sub": f"user-of-{tenant}",
            "tenant": tenant,
            "iat": now,
            "nbf": now,
            "exp": now + 600,
        }
        claims.update(overrides)
        return claims

    def sign(self, claims: dict[str, Any], *, kid: str = "k1", key: Any = None) -> str:
        signer = key or next(k for k in self.keys if k.kid == kid)
        token: bytes = JsonWebToken(["RS256"]).encode({"alg": "RS256", "kid": kid}, claims, signer)
        return token.decode()

    def token(self, tenant: str, **overrides: Any) -> str:
        return self.sign(self.claims(tenant, **overrides))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    running = Issuer()
    yield running
    running.close()


@pytest.fixture
def auto_onboard() -> bool:
    return False


def auth_settings(issuer: Issuer, **overrides: Any) -> AuthSettings:
    values: dict[str, Any] = {
        "providers": ["static", "jwt", "introspection"],
        "jwks_url": f"{issuer.url}/jwks",
        "issuer": issuer.url,
        "audience": AUDIENCE,
        "algorithms": ["RS256"],
        "leeway_s": 5,
        "jwks_refresh_interval_s": REFRESH_S,
        "introspection_url": f"{issuer.url}/introspect",
        "client_id": CLIENT_ID,
        "client_secret": SecretStr(CLIENT_SECRET),
        "introspection_ttl_s": 60.0,
        "introspection_inactive_ttl_s": 0.5,
    }
    values.update(overrides)
    return AuthSettings(**values)


@pytest.fixture
def settings(settings: Settings, issuer: Issuer, auto_onboard: bool) -> Settings:
    settings.auth = auth_settings(issuer, auto_onboard=auto_onboard)
    settings.limits.failed_auth_per_minute = 10_000  # these tests fail on purpose
    return settings


def whoami(gateway: RunningGateway, token: str) -> httpx.Response:
    return httpx.get(
        f"{gateway.url}/v1/whoami", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def test_valid_jwt_of_a_known_tenant_gets_whoami(gateway: RunningGateway, issuer: Issuer) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    response = whoami(gateway, issuer.token("acme"))
    assert response.status_code == 200, response.text
    assert response.json() == {"tenant": "acme", "namespace": "sless-acme"}
    # the platform's own tokens still work next to the cloud's
    assert gateway.admin.get("/v1/admin/tenants").status_code == 200


def test_jwt_of_an_unknown_tenant_is_refused_without_auto_onboard(
    gateway: RunningGateway, issuer: Issuer
) -> None:
    assert whoami(gateway, issuer.token("newco")).status_code == 401
    assert gateway.admin.get("/v1/admin/tenants").json()["tenants"] == []


def test_a_tenant_claim_that_is_no_tenant_name_is_refused(
    gateway: RunningGateway, issuer: Issuer
) -> None:
    for bad in ["Acme", "../admin", "a" * 80, ""]:
        assert whoami(gateway, issuer.token(bad)).status_code == 401
    assert whoami(gateway, issuer.sign({**issuer.claims("x"), "tenant": 42})).status_code == 401


def test_bad_jwts_are_refused(gateway: RunningGateway, issuer: Issuer) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    now = int(time.time())
    public_pem = issuer.keys[0].as_pem(is_private=False)
    header = {"alg": "HS256", "kid": "k1", "typ": "JWT"}
    payload = issuer.claims("acme")
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}"
    hs_with_public_key = (
        signing_input
        + "."
        + _b64(hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest())
    )
    none_header = _b64(json.dumps({"alg": "none", "kid": "k1"}).encode())
    alg_none = f"{none_header}.{_b64(json.dumps(payload).encode())}."
    stranger = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "k1"})
    cases = {
        "expired": issuer.token("acme", exp=now - 60, iat=now - 700, nbf=now - 700),
        "not yet valid": issuer.token("acme", nbf=now + 300),
        "wrong audience": issuer.token("acme", aud="someone-else"),
        "wrong issuer": issuer.token("acme", iss="https://evil.example"),
        "no exp": issuer.sign({k: v for k, v in payload.items() if k != "exp"}),
        "alg none": alg_none,
        "HS256 signed with the public key": hs_with_public_key,
        "signed by another key with the same kid": issuer.sign(payload, key=stranger),
        "tampered payload": issuer.token("acme").rsplit(".", 1)[0] + ".AAAA",
        "garbage": "a.b.c",
    }
    refused = {name: whoami(gateway, token).status_code for name, token in cases.items()}
    assert refused == dict.fromkeys(cases, 401)
    assert whoami(gateway, issuer.token("acme")).status_code == 200


def test_unknown_kid_is_refused_and_refetches_the_jwks_at_most_once_per_interval(
    gateway: RunningGateway, issuer: Issuer
) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    assert whoami(gateway, issuer.token("acme")).status_code == 200
    assert issuer.jwks_requests == 1
    time.sleep(REFRESH_S + 0.2)
    stranger = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "nope"})
    forged = [
        issuer.sign(issuer.claims("acme", jti=str(i)), kid="nope", key=stranger) for i in range(30)
    ]
    started = time.monotonic()
    for token in forged:
        assert whoami(gateway, token).status_code == 401
    elapsed = time.monotonic() - started
    # at most one refetch per interval, however many unknown kids arrive
    assert 2 <= issuer.jwks_requests <= 2 + int(elapsed / REFRESH_S)
    before = issuer.jwks_requests
    time.sleep(REFRESH_S + 0.2)
    token = issuer.sign(issuer.claims("acme"), kid="nope", key=stranger)
    assert whoami(gateway, token).status_code == 401
    assert issuer.jwks_requests == before + 1


def test_rotated_key_is_accepted_after_the_jwks_is_refetched(
    gateway: RunningGateway, issuer: Issuer
) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    assert whoami(gateway, issuer.token("acme")).status_code == 200
    issuer.add_key("k2")
    time.sleep(REFRESH_S + 0.2)
    rotated = issuer.sign(issuer.claims("acme"), kid="k2")
    assert whoami(gateway, rotated).status_code == 200
    assert issuer.jwks_requests == 2
    # the old key still verifies until the issuer drops it from its JWKS
    assert whoami(gateway, issuer.token("acme", jti="again")).status_code == 200


def test_introspected_tokens_active_and_inactive(gateway: RunningGateway, issuer: Issuer) -> None:
    gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    opaque = "opaque-" + secrets.token_urlsafe(24)
    issuer.active[opaque] = {"tenant": "acme", "exp": int(time.time()) + 600}
    response = whoami(gateway, opaque)
    assert response.status_code == 200, response.text
    assert response.json()["tenant"] == "acme"
    assert whoami(gateway, "opaque-" + secrets.token_urlsafe(24)).status_code == 401


@pytest.mark.parametrize("auto_onboard", [True])
def test_auto_onboard_creates_the_tenant_once_under_concurrency(
    gateway: RunningGateway, issuer: Issuer, database_url: str
) -> None:
    tokens = [issuer.token("newco", jti=str(i)) for i in range(10)]
    with ThreadPoolExecutor(max_workers=10) as pool:
        responses = list(pool.map(lambda t: whoami(gateway, t), tokens))
    assert [r.status_code for r in responses] == [200] * 10, [r.text for r in responses]
    assert {r.json()["namespace"] for r in responses} == {"sless-newco"}
    names = [t["tenant"] for t in gateway.admin.get("/v1/admin/tenants").json()["tenants"]]
    assert names == ["newco"]

    async def tokens_of_newco() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(database_url)
        try:
            return await conn.fetch("SELECT revoked_at FROM tokens WHERE tenant = 'newco'")
        finally:
            await conn.close()

    rows = asyncio.run(tokens_of_newco())
    # one onboarding (one first token), and that token is revoked: its secret was never shown
    assert len(rows) == 1
    assert rows[0]["revoked_at"] is not None
    # the cloud identity works on the management API of its namespace
    listed = httpx.get(
        f"{gateway.url}/v1/namespaces/sless-newco/functions",
        headers={"Authorization": f"Bearer {tokens[0]}"},
    )
    assert listed.status_code == 200


def test_introspection_results_are_cached(issuer: Issuer) -> None:
    provider = IntrospectionProvider(auth_settings(issuer, introspection_inactive_ttl_s=0.3))
    active = "opaque-" + secrets.token_urlsafe(24)
    soon = "opaque-" + secrets.token_urlsafe(24)
    inactive = "opaque-" + secrets.token_urlsafe(24)
    issuer.active[active] = {"tenant": "acme", "exp": int(time.time()) + 600}

    async def scenario() -> None:
        for _ in range(3):
            identity = await provider.verify(active)
            assert identity is not None
            assert identity.claims["tenant"] == "acme"
        assert issuer.introspection_requests == 1
        for _ in range(3):
            assert await provider.verify(inactive) is None
        assert issuer.introspection_requests == 2
        await asyncio.sleep(0.4)  # inactive results are remembered only briefly
        assert await provider.verify(inactive) is None
        assert issuer.introspection_requests == 3
        # an active result is trusted until its exp, not for the whole TTL (the margin
        # keeps a loaded machine from reaching exp before the first check)
        exp = int(time.time()) + 3
        issuer.active[soon] = {"tenant": "acme", "exp": exp}
        assert await provider.verify(soon) is not None
        assert issuer.introspection_requests == 4
        await asyncio.sleep(exp - time.time() + 1.1)
        del issuer.active[soon]
        assert await provider.verify(soon) is None
        assert issuer.introspection_requests == 5

    asyncio.run(scenario())


def test_introspection_with_wrong_client_credentials_is_unavailable(issuer: Issuer) -> None:
    from sless.errors import BackendUnavailable

    provider = IntrospectionProvider(
        auth_settings(issuer, client_secret=SecretStr("wrong-secret-" + "q" * 10))
    )
    with pytest.raises(BackendUnavailable):
        asyncio.run(provider.verify("opaque-x"))

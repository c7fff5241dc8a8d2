"""Cloud identities: JWTs verified against the issuer's JWKS, opaque tokens by RFC 7662.

Security reasoning:

- The algorithm comes from our settings, never from the token alone: the token's ``alg``
  must be in the configured asymmetric allowlist (no ``none``, no HS*: an HS256 token
  "signed" with the issuer's public RSA key is the classic algorithm confusion attack,
  RFC 8725 section 2.1), and the key's type must fit the algorithm.
- Keys come only from the configured JWKS URL over HTTP with a timeout. An unknown ``kid``
  refetches the JWKS at most once per ``jwks_refresh_interval_s``: a flood of tokens with
  random ``kid`` values cannot turn the gateway into a request amplifier for the issuer.
  Symmetric (``oct``) keys in a JWKS are ignored.
- ``iss``, ``aud`` and ``exp`` are essential; ``exp``/``nbf``/``iat`` are checked with the
  configured leeway.
- Introspection answers are cached by the token's SHA-256 digest (never the token):
  active ones until their ``exp`` or a TTL, inactive ones briefly.

authlib's ``authlib.jose`` does the cryptography. It warns that it is deprecated in favour
of joserfc (same maintainers; removal announced for authlib 2.0); the warning is silenced
at import only, so that it does not fail the warnings-as-errors test suite.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import time
import warnings
from dataclasses import dataclass
from typing import Any

import httpx

from sless.config import AuthSettings
from sless.errors import BackendUnavailable
from sless.tenancy.tokens import TOKEN_PREFIX, token_digest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from authlib.deprecate import AuthlibDeprecationWarning

    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.jose import JsonWebKey, JsonWebToken
    from authlib.jose.errors import JoseError

log = logging.getLogger(__name__)

#: the key type each algorithm family must be used with
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
_CACHE_MAX = 10_000


@dataclass(frozen=True)
class Identity:
    """A verified cloud identity: its claims, and which provider vouched for it."""

    provider: str
    claims: dict[str, Any]

    def __repr__(self) -> str:
        return f"Identity(provider={self.provider!r}, sub={str(self.claims.get('sub'))[:64]!r})"


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and not token.startswith(TOKEN_PREFIX)


def _b64json(segment: str) -> Any:
    padded = segment + "=" * (-len(segment) % 4)
    return json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


class JWTProvider:
    """JWTs signed by the provider's cloud, verified against its JWKS."""

    name = "jwt"

    def __init__(self, settings: AuthSettings) -> None:
        if not (settings.jwks_url and settings.issuer and settings.audience):
            raise ValueError("the jwt provider needs jwks_url, issuer and audience")
        self.settings = settings
        self._jwks_url = settings.jwks_url
        self._keys: dict[str | None, Any] = {}
        self._fetched_at: float | None = None  # monotonic time of the last fetch attempt
        self._lock = asyncio.Lock()
        self.fetches = 0

    def recognises(self, token: str) -> bool:
        return looks_like_jwt(token)

    async def verify(self, token: str) -> Identity | None:
        """The identity of a valid token, else None (any reason: never said to callers)."""
        try:
            header = _b64json(token.split(".", 1)[0])
        except (ValueError, binascii.Error, UnicodeError):
            return None
        if not isinstance(header, dict):
            return None
        alg = header.get("alg")
        kid = header.get("kid")
        if not isinstance(alg, str) or alg not in self.settings.algorithms:
            return None
        if kid is not None and not isinstance(kid, str):
            return None
        key = await self._key(kid)
        if key is None or _KEY_TYPES.get(alg[:2]) != key.kty:
            return None
        options = {
            "iss": {"essential": True, "value": self.settings.issuer},
            "aud": {"essential": True, "value": self.settings.audience},
            "exp": {"essential": True},
        }
        try:
            claims = JsonWebToken([alg]).decode(token, key, claims_options=options)
            claims.validate(leeway=self.settings.leeway_s)
        except (JoseError, ValueError, TypeError):
            return None
        return Identity(provider=self.name, claims=dict(claims))

    async def _key(self, kid: str | None) -> Any:
        if self._needs_fetch(kid, time.monotonic()):
            async with self._lock:
                # another request may have fetched while this one waited
                if self._needs_fetch(kid, time.monotonic()):
                    await self._fetch()
        return self._find(kid)

    def _needs_fetch(self, kid: str | None, now: float) -> bool:
        if self._fetched_at is None:
            return True
        age = now - self._fetched_at
        if age >= self.settings.jwks_max_age_s:
            return True
        # an unknown kid (a rotated key?) refetches, but at most once per interval
        return self._find(kid) is None and age >= self.settings.jwks_refresh_interval_s

    def _find(self, kid: str | None) -> Any:
        if kid is None:
            # a token without kid is accepted only when the issuer has exactly one key
            keys = list(self._keys.values())
            return keys[0] if len(keys) == 1 else None
        return self._keys.get(kid)

    async def _fetch(self) -> None:
        self.fetches += 1
        try:
            async with httpx.AsyncClient(
                timeout=self.settings.http_timeout_s, follow_redirects=False
            ) as client:
                response = await client.get(self._jwks_url)
                response.raise_for_status()
                document = response.json()
        except (httpx.HTTPError, ValueError) as e:
            log.warning("JWKS fetch failed: %s", type(e).__name__)
            # a failed fetch counts too: an unreachable issuer is not asked on every request
            self._fetched_at = time.monotonic()
            if not self._keys:
                raise BackendUnavailable("the token issuer's keys are unavailable") from e
            return  # keep the keys we have
        keys: dict[str | None, Any] = {}
        for jwk in document.get("keys", []) if isinstance(document, dict) else []:
            if not isinstance(jwk, dict) or jwk.get("kty") not in ("RSA", "EC", "OKP"):
                continue  # never a symmetric key
            if jwk.get("use", "sig") != "sig":
                continue
            try:
                key = JsonWebKey.import_key(jwk)
            except (JoseError, ValueError, TypeError):
                log.warning("JWKS: skipped an unusable key")
                continue
            keys[jwk.get("kid")] = key
        self._keys = keys
        # set only now: requests that arrive during the fetch wait on the lock, then see it
        self._fetched_at = time.monotonic()
        log.info("JWKS fetched: %d signing keys", len(keys))


class IntrospectionProvider:
    """Opaque tokens checked at an RFC 7662 endpoint with client credentials."""

    name = "introspection"

    def __init__(self, settings: AuthSettings) -> None:
        if not (settings.introspection_url and settings.client_id and settings.client_secret):
            raise ValueError(
                "the introspection provider needs introspection_url, client_id, client_secret"
            )
        self.settings = settings
        self._url = settings.introspection_url
        self._auth = (settings.client_id, settings.client_secret.get_secret_value())
        self._cache: dict[bytes, tuple[dict[str, Any] | None, float]] = {}
        self.requests = 0

    def recognises(self, token: str) -> bool:
        return not token.startswith(TOKEN_PREFIX)

    async def verify(self, token: str) -> Identity | None:
        digest = token_digest(token)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return Identity(self.name, cached[0]) if cached[0] is not None else None
        claims = await self._introspect(token)
        ttl = self.settings.introspection_inactive_ttl_s
        if claims is not None:
            ttl = self.settings.introspection_ttl_s
            exp = claims.get("exp")
            if isinstance(exp, int | float):
                ttl = min(ttl, exp - time.time())
                if ttl <= 0:
                    claims, ttl = None, self.settings.introspection_inactive_ttl_s
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[digest] = (claims, now + ttl)
        return Identity(self.name, claims) if claims is not None else None

    async def _introspect(self, token: str) -> dict[str, Any] | None:
        self.requests += 1
        try:
            async with httpx.AsyncClient(
                timeout=self.settings.http_timeout_s, follow_redirects=False
            ) as client:
                response = await client.post(
                    self._url,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=self._auth,
                    headers={"Accept": "application/json"},
                )
                response.raise_for_status()
                answer = response.json()
        except (httpx.HTTPError, ValueError) as e:
            log.warning("token introspection failed: %s", type(e).__name__)
            raise BackendUnavailable("the token introspection endpoint is unavailable") from e
        if not isinstance(answer, dict) or answer.get("active") is not True:
            return None
        return answer


Provider = JWTProvider | IntrospectionProvider


def make_providers(settings: AuthSettings) -> list[Provider | None]:
    """The configured chain; ``None`` stands for the platform's own static tokens."""
    chain: list[Provider | None] = []
    for name in settings.providers:
        if name == "static":
            chain.append(None)
        elif name == "jwt":
            chain.append(JWTProvider(settings))
        else:
            chain.append(IntrospectionProvider(settings))
    return chain

"""Who may call: the provider's admin and metrics tokens, and the auth providers that
turn a bearer token into a tenant.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

#: a token that a provider chooses by hand must be at least this long (the generated ones
#: are 48 characters: ``sl_a_`` and 256 random bits)
MIN_CONFIGURED_TOKEN_LENGTH = 32
TOKEN_FORMAT_HINT = (
    f"at least {MIN_CONFIGURED_TOKEN_LENGTH} printable ASCII characters, no spaces; make one"
    " with: python3 -c \"import secrets; print('sl_a_' + secrets.token_urlsafe(32))\""
)


def check_configured_token(value: SecretStr | None) -> SecretStr | None:
    """Refuse, at start, a hand-set token that would be weak or could never be typed back.

    The message never includes the value (it is a secret, and it ends up in a terminal).
    """
    if value is None:
        return None
    secret = value.get_secret_value()
    if (
        len(secret) < MIN_CONFIGURED_TOKEN_LENGTH
        or not secret.isascii()
        or not secret.isprintable()
        or any(c.isspace() for c in secret)
    ):
        raise ValueError(f"must be {TOKEN_FORMAT_HINT}")
    return value


class AdminSettings(BaseModel):
    #: provider admin token; when unset one is generated on first start, printed once
    #: and stored hashed. Set by hand, any token of ``MIN_CONFIGURED_TOKEN_LENGTH``
    #: characters or more works; a shorter one stops the start with a one-line error.
    token: SecretStr | None = None

    _check_token = field_validator("token")(check_configured_token)


class MetricsSettings(BaseModel):
    """``SLESS_METRICS_TOKEN``: a bearer token that may read ``/metrics`` (and nothing
    else), for a scraper that should not hold the admin token. Same format rules as the
    admin token."""

    token: SecretStr | None = None

    _check_token = field_validator("token")(check_configured_token)


#: signature algorithms a JWKS may be used with: asymmetric only. ``none`` and the HMAC
#: family are never accepted: an HS256 token "signed" with the issuer's *public* key would
#: otherwise verify (RFC 8725 section 2.1 and 3.1, CVE-2015-9235 "algorithm confusion").
ASYMMETRIC_JWS_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

AuthProviderName = Literal["static", "jwt", "introspection"]


def _static_only() -> list[AuthProviderName]:
    return ["static"]


class AuthSettings(BaseModel):
    """Who may call the API: ``SLESS_AUTH_<FIELD>``.

    ``providers`` are tried in order: ``static`` (the platform's own ``sl_`` tokens),
    ``jwt`` (tokens signed by the provider's cloud, verified against its JWKS) and
    ``introspection`` (RFC 7662, for opaque cloud tokens). A cloud identity names its
    tenant in ``tenant_claim``.
    """

    providers: list[AuthProviderName] = Field(default_factory=_static_only)
    #: claim that carries the tenant name (a DNS label), e.g. ``tenant`` or ``sub``
    tenant_claim: str = "tenant"
    #: onboard the tenant of the first valid cloud token that names an unknown tenant
    auto_onboard: bool = False
    #: seconds an HTTP call to the issuer (JWKS, introspection) may take
    http_timeout_s: float = 5.0
    # -- jwt
    jwks_url: str | None = None
    issuer: str | None = None
    audience: str | None = None
    algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256"])
    #: clock skew tolerated on ``exp``, ``nbf`` and ``iat``
    leeway_s: int = 30
    #: an unknown ``kid`` refetches the JWKS at most once per this many seconds
    jwks_refresh_interval_s: float = 60.0
    #: the JWKS is refetched when older than this, even without an unknown ``kid``
    jwks_max_age_s: float = 3600.0
    # -- introspection (RFC 7662)
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    #: an active result is trusted until its ``exp``, at most this long
    introspection_ttl_s: float = 60.0
    #: an inactive result is remembered this long (stops hammering the endpoint)
    introspection_inactive_ttl_s: float = 5.0

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, value: list[str]) -> list[str]:
        refused = [a for a in value if a not in ASYMMETRIC_JWS_ALGORITHMS]
        if refused:
            raise ValueError(
                f"algorithms {refused} refused: only asymmetric algorithms may be used with"
                " a JWKS (never 'none' or HS*)"
            )
        if not value:
            raise ValueError("at least one algorithm is needed")
        return value

    @model_validator(mode="after")
    def _complete(self) -> AuthSettings:
        if not self.providers:
            raise ValueError("at least one auth provider is needed")
        if "jwt" in self.providers and not (self.jwks_url and self.issuer and self.audience):
            raise ValueError("the jwt provider needs jwks_url, issuer and audience")
        if "introspection" in self.providers and not (
            self.introspection_url and self.client_id and self.client_secret
        ):
            raise ValueError(
                "the introspection provider needs introspection_url, client_id and client_secret"
            )
        return self

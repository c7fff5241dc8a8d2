"""Auth settings refuse what would make tokens forgeable, and come from SLESS_AUTH_*."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sless.config import AuthSettings, Settings
from sless.tenancy import Identity
from sless.tenancy.providers import looks_like_jwt

JWT = {"providers": ["jwt"], "jwks_url": "http://i/jwks", "issuer": "http://i", "audience": "a"}


@pytest.mark.parametrize("alg", ["none", "HS256", "HS384", "HS512", "nOnE"])
def test_symmetric_and_none_algorithms_are_refused(alg: str) -> None:
    with pytest.raises(ValidationError, match="only asymmetric"):
        AuthSettings(**JWT, algorithms=["RS256", alg])


def test_empty_algorithms_are_refused() -> None:
    with pytest.raises(ValidationError):
        AuthSettings(**JWT, algorithms=[])


@pytest.mark.parametrize("missing", ["jwks_url", "issuer", "audience"])
def test_jwt_provider_needs_its_issuer(missing: str) -> None:
    with pytest.raises(ValidationError, match="jwt provider needs"):
        AuthSettings(**{**JWT, missing: None})


def test_introspection_provider_needs_client_credentials() -> None:
    with pytest.raises(ValidationError, match="introspection provider needs"):
        AuthSettings(providers=["introspection"], introspection_url="http://i/introspect")


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(ValidationError):
        AuthSettings(providers=["ldap"])  # type: ignore[list-item]


def test_defaults_are_static_tokens_only() -> None:
    auth = AuthSettings()
    assert auth.providers == ["static"]
    assert auth.auto_onboard is False
    assert auth.tenant_claim == "tenant"


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_AUTH_PROVIDERS", '["static", "jwt"]')
    monkeypatch.setenv("SLESS_AUTH_JWKS_URL", "https://id.example/jwks")
    monkeypatch.setenv("SLESS_AUTH_ISSUER", "https://id.example")
    monkeypatch.setenv("SLESS_AUTH_AUDIENCE", "sless")
    monkeypatch.setenv("SLESS_AUTH_AUTO_ONBOARD", "true")
    monkeypatch.setenv("SLESS_AUTH_TENANT_CLAIM", "sub")
    monkeypatch.setenv("SLESS_LIMITS_API_BURST", "7")
    monkeypatch.setenv("SLESS_LIMITS_FAILED_AUTH_PER_MINUTE", "3")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.auth.providers == ["static", "jwt"]
    assert settings.auth.auto_onboard is True
    assert settings.auth.tenant_claim == "sub"
    assert settings.limits.api_burst == 7
    assert settings.limits.failed_auth_per_minute == 3


def test_client_secret_is_not_shown() -> None:
    auth = AuthSettings(
        providers=["introspection"],
        introspection_url="http://i/introspect",
        client_id="gw",
        client_secret="very-secret-value",  # type: ignore[arg-type]
    )
    assert "very-secret-value" not in repr(auth)


def test_identity_repr_shows_no_claims_but_the_subject() -> None:
    identity = Identity("jwt", {"sub": "alice", "email": "alice@example.com", "tenant": "acme"})
    assert "alice@example.com" not in repr(identity)


def test_which_tokens_look_like_jwts() -> None:
    assert looks_like_jwt("a.b.c")
    assert not looks_like_jwt("sl_t_a.b.c")
    assert not looks_like_jwt("opaque-token")

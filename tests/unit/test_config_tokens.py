"""A token set by hand is checked at start, with a one-line error that never shows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from sless.cli import main
from sless.config import MIN_CONFIGURED_TOKEN_LENGTH, Settings


@pytest.mark.parametrize(
    "token",
    ["my-own-secret", "x" * (MIN_CONFIGURED_TOKEN_LENGTH - 1), "with a space " + "x" * 40],
)
def test_a_weak_or_untypeable_admin_token_is_refused(token: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, admin={"token": token})  # type: ignore[call-arg]
    assert token not in str(caught.value.errors(include_input=False))


@pytest.mark.parametrize(
    "token", ["x" * MIN_CONFIGURED_TOKEN_LENGTH, "sl_a_" + "A1-_" * 11, "any/format+works=" * 2]
)
def test_any_long_enough_admin_token_is_accepted(token: str) -> None:
    settings = Settings(_env_file=None, admin={"token": token})  # type: ignore[call-arg]
    assert settings.admin.token is not None
    assert settings.admin.token.get_secret_value() == token


def test_sless_up_refuses_a_short_admin_token_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_ADMIN_TOKEN", "my-own-secret")
    result = CliRunner().invoke(main, ["up", "--data-dir", "/nonexistent/never-created"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: SLESS_ADMIN_TOKEN must be at least 32")
    assert "secrets.token_urlsafe" in lines[0]
    assert "my-own-secret" not in result.output


def test_the_metrics_token_follows_the_admin_token_rules() -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, metrics={"token": "short-one"})  # type: ignore[call-arg]
    assert "short-one" not in str(caught.value.errors(include_input=False))
    token = "m" * MIN_CONFIGURED_TOKEN_LENGTH
    settings = Settings(_env_file=None, metrics={"token": token})  # type: ignore[call-arg]
    assert settings.metrics.token is not None
    assert settings.metrics.token.get_secret_value() == token


def test_sless_up_refuses_production_without_a_secrets_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SLESS_ENVIRONMENT", "production")
    monkeypatch.delenv("SLESS_SECRETS_KEYS", raising=False)
    result = CliRunner().invoke(main, ["up", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1, result.output
    assert "SLESS_SECRETS_KEYS is not set" in result.output
    assert not (tmp_path / "data" / "secrets.key").exists()
    assert not (tmp_path / "data" / "pg").exists()

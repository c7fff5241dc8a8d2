"""The short environment names the documentation promises, next to the long ones."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from sless.config import ENV_ALIASES, Settings
from sless.policies import sandbox_runtime_class


def build() -> Settings:
    return Settings(_env_file=None)  # type: ignore[call-arg]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for alias, (group, name) in ENV_ALIASES.items():
        monkeypatch.delenv(alias, raising=False)
        monkeypatch.delenv(f"SLESS_{group}_{name}".upper(), raising=False)


def test_the_aliases_are_the_documented_ones() -> None:
    assert ENV_ALIASES == {
        "SLESS_AUTO_ONBOARD": ("auth", "auto_onboard"),
        "SLESS_ALLOW_NO_SANDBOX": ("kubernetes", "allow_no_sandbox"),
        "SLESS_EMBEDDED_ISOLATION": ("sandbox", "isolation"),
    }
    settings = build()
    assert settings.auth.auto_onboard is False
    assert settings.kubernetes.allow_no_sandbox is False
    assert settings.sandbox.isolation == "bubblewrap"


def test_short_names_set_the_long_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_AUTO_ONBOARD", "true")
    monkeypatch.setenv("sless_allow_no_sandbox", "1")  # case-insensitive, like the rest
    settings = build()
    assert settings.auth.auto_onboard is True
    assert settings.kubernetes.allow_no_sandbox is True


def test_long_names_keep_working(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_AUTH_AUTO_ONBOARD", "true")
    monkeypatch.setenv("SLESS_KUBERNETES_ALLOW_NO_SANDBOX", "true")
    settings = build()
    assert settings.auth.auto_onboard is True
    assert settings.kubernetes.allow_no_sandbox is True


@pytest.mark.parametrize(("long", "short"), [("false", "true"), ("true", "false")])
def test_the_long_name_wins_when_both_are_set(
    monkeypatch: pytest.MonkeyPatch, long: str, short: str
) -> None:
    monkeypatch.setenv("SLESS_AUTO_ONBOARD", short)
    monkeypatch.setenv("SLESS_AUTH_AUTO_ONBOARD", long)
    monkeypatch.setenv("SLESS_ALLOW_NO_SANDBOX", short)
    monkeypatch.setenv("SLESS_KUBERNETES_ALLOW_NO_SANDBOX", long)
    settings = build()
    assert settings.auth.auto_onboard is (long == "true")
    assert settings.kubernetes.allow_no_sandbox is (long == "true")


def test_an_alias_merges_with_the_groups_other_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_AUTO_ONBOARD", "true")
    monkeypatch.setenv("SLESS_AUTH_TENANT_CLAIM", "sub")
    monkeypatch.setenv("SLESS_KUBERNETES_RUNTIME_CLASS", "kata")
    monkeypatch.setenv("SLESS_ALLOW_NO_SANDBOX", "true")
    settings = build()
    assert (settings.auth.auto_onboard, settings.auth.tenant_claim) == (True, "sub")
    assert (settings.kubernetes.runtime_class, settings.kubernetes.allow_no_sandbox) == (
        "kata",
        True,
    )


def test_a_bad_value_under_a_short_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLESS_ALLOW_NO_SANDBOX", "perhaps")
    with pytest.raises(ValidationError, match="allow_no_sandbox"):
        build()


def test_no_sandbox_needs_the_flag_and_warns_on_every_start(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from sless.operator.handlers import check_sandbox

    monkeypatch.setenv("SLESS_KUBERNETES_RUNTIME_CLASS", "")
    with pytest.raises(ValueError, match="runtime_class is empty"):
        sandbox_runtime_class(build().kubernetes)
    monkeypatch.setenv("SLESS_ALLOW_NO_SANDBOX", "true")
    settings = build()
    assert sandbox_runtime_class(settings.kubernetes) is None
    with caplog.at_level(logging.WARNING, logger="sless.operator.handlers"):
        check_sandbox(settings)
        check_sandbox(settings)  # a second start warns again
    warnings = [r for r in caplog.records if "WITHOUT a sandbox" in r.getMessage()]
    assert len(warnings) == 2
    assert all(r.levelno == logging.WARNING for r in warnings)

"""The spec models validate what the API, the database and the CRDs share."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sless.models import FunctionSpec, is_dns1123_label, namespace_for


@pytest.mark.parametrize("name", ["a", "hello-world", "x1", "a" * 63])
def test_valid_names(name: str) -> None:
    assert is_dns1123_label(name)


@pytest.mark.parametrize("name", ["", "A", "-a", "a-", "a_b", "a.b", "a" * 64, "é"])
def test_invalid_names(name: str) -> None:
    assert not is_dns1123_label(name)


def test_defaults_follow_the_architecture() -> None:
    spec = FunctionSpec()
    assert spec.runtime == "python3.11"
    assert spec.entrypoint == "handler.handle"
    assert spec.egress == []
    assert spec.auth == "public"
    assert namespace_for("acme") == "sless-acme"


@pytest.mark.parametrize(
    "egress", ["api.example.com:443", "10.0.0.0/8:5432", "192.168.1.1:80", "[::1]:8080"]
)
def test_valid_egress(egress: str) -> None:
    assert FunctionSpec(egress=[egress]).egress == [egress]


@pytest.mark.parametrize("egress", ["example.com", "example.com:0", "10.0.0.0/33:80", "a b:1"])
def test_invalid_egress(egress: str) -> None:
    with pytest.raises(ValidationError):
        FunctionSpec(egress=[egress])


@pytest.mark.parametrize("key", ["SLESS_TOKEN", "LD_PRELOAD", "PYTHONPATH", "NODE_OPTIONS", "1X"])
def test_reserved_or_invalid_env(key: str) -> None:
    with pytest.raises(ValidationError):
        FunctionSpec(env={key: "x"})


@pytest.mark.parametrize("entrypoint", ["handler", "handler.", ".handle", "a-b.handle", "h.h(x)"])
def test_invalid_entrypoint(entrypoint: str) -> None:
    with pytest.raises(ValidationError):
        FunctionSpec(entrypoint=entrypoint)


def test_limits_are_bounded() -> None:
    with pytest.raises(ValidationError):
        FunctionSpec(memory_mb=16)
    with pytest.raises(ValidationError):
        FunctionSpec(timeout_s=0)


@pytest.mark.parametrize(
    ("secrets", "env", "message"),
    [
        ([{"name": "db", "env": "A"}, {"name": "db", "env": "B"}], {}, "named once"),
        ([{"name": "a", "env": "X"}, {"name": "b", "env": "X"}], {}, "same environment"),
        ([{"name": "a", "env": "X"}], {"X": "1"}, "set by env as well"),
        ([{"name": "a", "env": "SLESS_TOKEN"}], {}, "reserved"),
        ([{"name": "a", "env": "LD_PRELOAD"}], {}, "reserved"),
        ([{"name": "other-ns/a", "env": "X"}], {}, "DNS-1123"),
        ([{"name": "a", "env": "X", "namespace": "sless-b"}], {}, "Extra inputs"),
    ],
)
def test_function_secrets_are_checked(secrets: list, env: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match=message):
        FunctionSpec.model_validate({"secrets": secrets, "env": env})


def test_function_secrets_are_names_only() -> None:
    spec = FunctionSpec.model_validate({"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]})
    assert spec.secret_names() == ["dbpass"]
    assert spec.model_dump()["secrets"] == [{"name": "dbpass", "env": "DB_PASSWORD"}]

"""The spec models validate what the API, the database and the CRDs share."""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import ValidationError

from sless.backends import route
from sless.models import CodeRef, FunctionSpec, TrafficTarget, is_dns1123_label, namespace_for


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


def test_a_traffic_split_adds_up_to_100_names_each_version_once_and_has_few_entries() -> None:
    code = CodeRef(sha256="a" * 64, blob_key="k", version="v3")
    spec = FunctionSpec(
        code=code,
        traffic=[TrafficTarget(version="v2", percent=75), TrafficTarget(version="v3", percent=25)],
    )
    assert spec.version == "v3"
    assert spec.routed_versions() == ["v3", "v2"]
    assert spec.runnable().traffic == []
    assert spec.runnable().code == code
    for traffic, message in (
        ([{"version": "v1", "percent": 60}], "add up to 60, not 100"),
        ([{"version": "v1", "percent": 50}, {"version": "v1", "percent": 50}], "named once"),
        ([{"version": f"v{i}", "percent": 20} for i in range(1, 6)], "at most 4"),
        ([{"version": "latest", "percent": 100}], "not a version name"),
        ([{"version": "v0", "percent": 100}], "not a version name"),
        ([{"version": "v1", "percent": 101}], "less than or equal to 100"),
    ):
        with pytest.raises(ValidationError, match=message):
            FunctionSpec.model_validate({"traffic": traffic})
    # no split: the current version; a named version wins; 0 % is never drawn
    assert route(FunctionSpec(code=code)) == "v3"
    assert route(FunctionSpec()) is None
    assert route(spec, "v2") == "v2"
    zero = FunctionSpec(
        code=code,
        traffic=[TrafficTarget(version="v2", percent=100), TrafficTarget(version="v3", percent=0)],
    )
    assert {route(zero) for _ in range(200)} == {"v2"}
    drawn = Counter(route(spec) for _ in range(4000))
    assert set(drawn) == {"v2", "v3"}
    # 75/25 within a wide margin (the chance of missing it is far below 1e-9)
    assert 2700 < drawn["v2"] < 3300

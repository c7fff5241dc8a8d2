"""EndpointSlices folded into ready addresses: pure logic, no control plane needed."""

from __future__ import annotations

from typing import Any

from sless.backends.kubernetes.endpoints import SliceIndex, addresses_of


def _slice(
    name: str,
    endpoints: list[dict[str, Any]],
    ports: list[dict[str, Any]],
    *,
    service: str = "fn-a",
    family: str = "IPv4",
) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": "sless-t",
            "name": name,
            "labels": {"kubernetes.io/service-name": service},
        },
        "addressType": family,
        "endpoints": endpoints,
        "ports": ports,
    }


def test_ready_unset_counts_as_ready_and_terminating_does_not() -> None:
    item = _slice(
        "s",
        [
            {"addresses": ["10.0.0.1"]},
            {"addresses": ["10.0.0.2"], "conditions": {"ready": True}},
            {"addresses": ["10.0.0.3"], "conditions": {"ready": False}},
            {"addresses": ["10.0.0.4"], "conditions": {"terminating": True}},
        ],
        [{"name": "metrics", "port": 9090}, {"name": "http", "port": 8080}],
    )
    assert addresses_of(item) == {"http://10.0.0.1:8080", "http://10.0.0.2:8080"}


def test_first_port_without_an_http_port_and_ipv6_brackets() -> None:
    item = _slice("s", [{"addresses": ["fd00::5"]}], [{"port": 7000}], family="IPv6")
    assert addresses_of(item) == {"http://[fd00::5]:7000"}
    assert (
        addresses_of(_slice("s", [{"addresses": ["x.example"]}], [{"port": 1}], family="FQDN"))
        == set()
    )
    assert addresses_of(_slice("s", [{"addresses": ["10.0.0.1"]}], [])) == set()
    assert addresses_of(_slice("s", [{"addresses": ["10.0.0.1"]}], [{"port": None}])) == set()


def test_index_merges_slices_and_reports_what_changed() -> None:
    index = SliceIndex()
    one = _slice("a-1", [{"addresses": ["10.0.0.1"]}], [{"port": 8080}])
    two = _slice("a-2", [{"addresses": ["10.0.0.2"]}], [{"port": 8080}])
    other = _slice("b-1", [{"addresses": ["10.0.0.9"]}], [{"port": 8080}], service="fn-b")
    assert index.reset([one, other]) == {("sless-t", "fn-a"), ("sless-t", "fn-b")}
    assert index.apply("ADDED", two) == {("sless-t", "fn-a")}
    assert index.get("sless-t", "fn-a") == {"http://10.0.0.1:8080", "http://10.0.0.2:8080"}
    # an unchanged slice changes nothing
    assert index.apply("MODIFIED", two) == set()
    assert index.apply("DELETED", one) == {("sless-t", "fn-a")}
    assert index.get("sless-t", "fn-a") == {"http://10.0.0.2:8080"}
    # a slice relabelled to another service moves its addresses
    moved = _slice("a-2", [{"addresses": ["10.0.0.2"]}], [{"port": 8080}], service="fn-b")
    assert index.apply("MODIFIED", moved) == {("sless-t", "fn-a"), ("sless-t", "fn-b")}
    assert index.get("sless-t", "fn-a") == frozenset()
    assert index.get("sless-t", "fn-b") == {"http://10.0.0.2:8080", "http://10.0.0.9:8080"}
    assert index.reset([]) == {("sless-t", "fn-b")}
    assert index.get("sless-t", "fn-b") == frozenset()

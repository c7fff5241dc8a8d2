"""The egress allowlist decision (pure): which destination a worker may reach."""

from __future__ import annotations

import ipaddress

import pytest

from sless.models import EgressReach
from sless.sandbox import egress
from sless.sandbox.egress import EgressRule, allowed, forbidden, own_addresses, resolve_allowed

ip = ipaddress.ip_address


def rules(*texts: str) -> list[EgressRule]:
    return [EgressRule.parse(t) for t in texts]


def test_host_rule_allows_that_host_and_port_only() -> None:
    r = rules("api.example.com:443")
    assert allowed("api.example.com", 443, [ip("93.184.216.34")], r) == ip("93.184.216.34")
    assert allowed("API.example.com.", 443, [ip("93.184.216.34")], r) is not None
    assert allowed("api.example.com", 80, [ip("93.184.216.34")], r) is None
    assert allowed("evil.example.com", 443, [ip("93.184.216.34")], r) is None


def test_cidr_rule_allows_addresses_inside() -> None:
    r = rules("10.20.0.0/16:5432")
    # the provider allows its tenants' private range
    reach = EgressReach(private_allowed=(ipaddress.ip_network("10.0.0.0/8"),))
    assert allowed("db.internal", 5432, [ip("10.20.3.4")], r, reach) == ip("10.20.3.4")
    assert allowed("10.20.3.4", 5432, [ip("10.20.3.4")], r, reach) is not None
    assert allowed("10.21.0.1", 5432, [ip("10.21.0.1")], r, reach) is None


def test_a_private_range_the_provider_does_not_allow_is_refused_whatever_the_rule() -> None:
    r = rules("10.20.0.0/16:5432", "db.internal:5432", "0.0.0.0/0:5432")
    assert allowed("10.20.3.4", 5432, [ip("10.20.3.4")], r) is None
    # a name the tenant controls, resolving to the provider's network
    assert allowed("db.internal", 5432, [ip("10.20.3.4")], r) is None
    assert allowed("db.internal", 5432, [ip("fd12::4")], r) is None
    # another part of the range than the provider allows
    reach = EgressReach(private_allowed=(ipaddress.ip_network("10.30.0.0/16"),))
    assert allowed("10.20.3.4", 5432, [ip("10.20.3.4")], r, reach) is None
    assert allowed("93.184.216.34", 5432, [ip("93.184.216.34")], r) == ip("93.184.216.34")


def test_the_machines_own_address_is_refused_inside_an_allowed_range() -> None:
    r = rules("10.20.0.0/16:5432")
    reach = EgressReach(
        private_allowed=(ipaddress.ip_network("10.20.0.0/16"),), own=frozenset({ip("10.20.0.1")})
    )
    assert allowed("10.20.0.1", 5432, [ip("10.20.0.1")], r, reach) is None
    assert allowed("10.20.0.2", 5432, [ip("10.20.0.2")], r, reach) == ip("10.20.0.2")


def test_own_addresses_are_read_from_this_namespace() -> None:
    # loopback is configured in every network namespace, so it is always among them
    assert ip("127.0.0.1") in own_addresses()


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "127.0.0.1",
        "127.1.2.3",
        "::1",
        "fd00:ec2::254",
        "0.0.0.0",
        "::ffff:127.0.0.1",
    ],
)
def test_metadata_and_loopback_are_never_allowed(address: str) -> None:
    assert forbidden(ip(address))
    everything = rules("0.0.0.0/0:80", "[::]/0:80")
    assert allowed(address, 80, [ip(address)], everything) is None


def test_a_name_resolving_to_a_forbidden_address_is_refused() -> None:
    r = rules("rebind.example.com:80")
    # DNS rebinding: one good and one metadata address
    assert (
        allowed("rebind.example.com", 80, [ip("93.184.216.34"), ip("169.254.169.254")], r) is None
    )


def test_unresolvable_is_refused() -> None:
    assert allowed("nowhere.example", 443, [], rules("nowhere.example:443")) is None


async def test_callbacks_resolve_under_the_providers_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """``resolve_allowed`` (the gateway's callbacks) asks the same rule as the proxy."""
    monkeypatch.setattr(egress, "own_addresses", lambda: frozenset({ip("10.251.41.1")}))
    everything = rules("0.0.0.0/0:80")
    assert await resolve_allowed("10.251.41.2", 80, everything) is None
    allows = [ipaddress.ip_network("10.251.41.0/24")]
    assert await resolve_allowed("10.251.41.2", 80, everything, allows) == ip("10.251.41.2")
    # the machine's own address, inside the allowed range: refused still
    assert await resolve_allowed("10.251.41.1", 80, everything, allows) is None

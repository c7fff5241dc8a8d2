"""The provider's rule over tenant egress (pure): private ranges and the gateway machine's
own addresses are refused whatever the tenant's allowlist says, unless the provider allows
a private range; the never-reachable classes stay refused even then."""

from __future__ import annotations

import ipaddress

import pytest

from sless.models.reach import PRIVATE_SETTING, EgressReach

ip = ipaddress.ip_address
net = ipaddress.ip_network


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "10.251.0.2",
        "172.16.5.4",
        "172.31.255.255",
        "192.168.1.1",
        "100.64.0.1",
        "198.18.0.1",
        "240.0.0.1",
        "fc00::1",
        "fd12:3456::1",
        "fec0::1",
        "::ffff:10.0.0.1",  # IPv4-mapped
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
    ],
)
def test_private_addresses_are_refused_by_default(address: str) -> None:
    reason = EgressReach().refusal(ip(address))
    assert reason is not None
    assert PRIVATE_SETTING in reason


@pytest.mark.parametrize(
    "address", ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "172.32.0.1", "100.128.0.1"]
)
def test_public_addresses_are_left_to_the_allowlist(address: str) -> None:
    assert EgressReach().refusal(ip(address)) is None


def test_an_allowed_range_is_reachable_and_only_that_range() -> None:
    reach = EgressReach(private_allowed=(net("10.251.0.0/16"),))
    assert reach.refusal(ip("10.251.3.4")) is None
    assert reach.refusal(ip("10.250.0.1")) is not None
    assert reach.refusal(ip("10.252.0.1")) is not None
    assert reach.refusal(ip("192.168.0.1")) is not None


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "169.254.169.254", "fd00:ec2::254", "::1", "224.0.0.1", "0.0.0.0"]
)
def test_never_reachable_stays_refused_when_everything_is_allowed(address: str) -> None:
    reach = EgressReach(private_allowed=(net("0.0.0.0/0"), net("::/0")))
    reason = reach.refusal(ip(address))
    assert reason is not None
    assert "never" in reason


def test_the_machines_own_address_is_refused_even_inside_an_allowed_range() -> None:
    reach = EgressReach(
        private_allowed=(net("10.251.0.0/16"),), own=frozenset({ip("10.251.0.1"), ip("8.8.4.4")})
    )
    own = reach.refusal(ip("10.251.0.1"))
    assert own is not None
    assert "own machine" in own
    assert reach.refusal(ip("::ffff:10.251.0.1")) is not None
    assert reach.refusal(ip("8.8.4.4")) is not None  # a public address of the machine too
    assert reach.refusal(ip("10.251.0.2")) is None


def test_a_network_is_refused_only_when_wholly_inside_a_refused_range() -> None:
    reach = EgressReach(private_allowed=(net("10.20.0.0/16"),))
    for wholly in ("10.128.0.0/9", "10.21.0.0/16", "192.168.0.0/24", "10.1.2.3/32", "fc00::/64"):
        assert reach.network_refusal(net(wholly)) is not None, wholly
    for reachable in (
        "0.0.0.0/0",
        "10.0.0.0/8",
        "10.20.0.0/16",
        "10.20.3.0/24",
        "::/0",
        "93.184.216.0/24",
    ):
        assert reach.network_refusal(net(reachable)) is None, reachable
    never = reach.network_refusal(net("169.254.0.0/24"))
    assert never is not None
    assert "never" in never


def test_blocked_lists_the_refused_ranges_less_what_is_allowed() -> None:
    reach = EgressReach(private_allowed=(net("10.0.0.0/9"),), own=frozenset({ip("203.0.113.7")}))
    blocked = reach.blocked()
    assert net("10.128.0.0/9") in blocked
    assert net("10.0.0.0/8") not in blocked
    assert not any(b.overlaps(net("10.0.0.0/9")) for b in blocked)
    assert net("169.254.0.0/16") in blocked
    assert net("203.0.113.7/32") in blocked

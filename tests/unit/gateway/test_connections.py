"""The connection guard's pure parts: the /proc address format and who gets cut."""

from __future__ import annotations

from sless.gateway.admission import Activity
from sless.gateway.connections import Connection, GuardLimits, proc_address, to_close

LIMITS = GuardLimits(
    port=8080, max_per_client=2, trusted_proxies=frozenset({"127.0.0.1"}), idle_timeout_s=None
)


def test_proc_addresses_are_read_in_host_order() -> None:
    assert proc_address("0100007F") == "127.0.0.1"
    assert proc_address("00000000000000000000000001000000") == "::1"
    assert proc_address("0000000000000000FFFF00000201A8C0") == "192.168.1.2"  # v4-mapped


def test_the_newest_idle_connections_beyond_the_cap_are_cut() -> None:
    held = [Connection(inode, "10.0.0.9", 40000 + inode) for inode in (5, 9, 7, 11)]
    activity = Activity(busy={("10.0.0.9", 40011): 1})  # the newest has a request in flight
    cut = to_close(held, activity, LIMITS, {}, now=0.0)
    assert [c.inode for c in cut["10.0.0.9"]] == [7, 9]


def test_a_trusted_proxy_is_not_capped_and_other_clients_are_counted_apart() -> None:
    held = [Connection(i, "127.0.0.1", 50000 + i) for i in range(10)]
    held += [Connection(100 + i, f"10.0.0.{i}", 1000) for i in range(5)]
    assert to_close(held, Activity(), LIMITS, {}, now=0.0) == {}


def test_with_an_idle_timeout_idle_connections_are_cut_but_not_busy_ones() -> None:
    limits = GuardLimits(
        port=8080, max_per_client=10, trusted_proxies=frozenset(), idle_timeout_s=5.0
    )
    held = [
        Connection(1, "10.0.0.1", 1),
        Connection(2, "10.0.0.1", 2),
        Connection(3, "10.0.0.1", 3),
    ]
    activity = Activity(busy={("10.0.0.1", 2): 1}, finished_at={("10.0.0.1", 3): 8.0})
    cut = to_close(held, activity, limits, {1: 0.0, 2: 0.0, 3: 0.0}, now=10.0)
    assert [c.inode for c in cut["10.0.0.1"]] == [1]  # 2 is busy, 3 finished a request at 8

"""The connection guard: the census (netlink against /proc), the /proc address format and
who gets cut."""

from __future__ import annotations

import contextlib
import socket

import pytest

from sless.gateway import sockdiag
from sless.gateway.admission import Activity
from sless.gateway.connections import (
    Connection,
    GuardLimits,
    established,
    listening_families,
    proc_address,
    proc_established,
    to_close,
)

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


def _connected(family: int, host: str, count: int) -> tuple[socket.socket, list[socket.socket]]:
    listener = socket.socket(family)
    listener.bind((host, 0))
    listener.listen()
    port = listener.getsockname()[1]
    sockets = [socket.create_connection((host, port)) for _ in range(count)]
    sockets += [listener.accept()[0] for _ in range(count)]
    return listener, sockets


@pytest.mark.parametrize(
    ("family", "host"), [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")]
)
def test_the_netlink_census_finds_what_proc_lists(family: int, host: str) -> None:
    """sock_diag and /proc/net/tcp{,6} name the same connections: inode, client, port."""
    listener, sockets = _connected(family, host, 3)
    with listener, contextlib.ExitStack() as stack:
        for sock in sockets:
            stack.enter_context(sock)
        port = listener.getsockname()[1]
        by_netlink = sockdiag.established(port, listening_families(host))
        assert by_netlink is not None
        by_proc = proc_established(port)
        assert len(by_proc) == 3
        assert sorted(by_netlink) == sorted((c.inode, c.client, c.port) for c in by_proc)
        # the client sides (their local port is another) are not the gateway's connections
        clients = {s.getsockname()[1] for s in sockets[:3]}
        assert {c[2] for c in by_netlink} == clients


def test_the_census_asks_only_the_listeners_family() -> None:
    listener, sockets = _connected(socket.AF_INET, "127.0.0.1", 2)
    with listener, contextlib.ExitStack() as stack:
        for sock in sockets:
            stack.enter_context(sock)
        port = listener.getsockname()[1]
        assert len(established(port, (socket.AF_INET,))) == 2
        assert established(port, (socket.AF_INET6,)) == []
    assert listening_families("0.0.0.0") == (socket.AF_INET,)
    assert listening_families("::") == (socket.AF_INET6,)
    assert listening_families("localhost") == (socket.AF_INET, socket.AF_INET6)


async def test_a_census_that_fails_does_not_end_the_guard(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The guard is the per-client connection cap: a failed census (the kernel refused a
    netlink dump, /proc unreadable) is logged and the next one still runs; a guard that
    died would leave the cap unenforced for the gateway's lifetime."""
    import asyncio

    from sless.gateway import connections

    censuses: list[int] = []

    def census(port: int, families: object) -> list[Connection]:
        censuses.append(port)
        if len(censuses) == 1:
            raise OSError(13, "Permission denied")
        return []

    monkeypatch.setattr(connections, "established", census)
    guard = connections.ConnectionGuard(LIMITS, Activity(), interval_s=0.01)
    task = asyncio.create_task(guard.run())
    try:
        for _ in range(200):
            if len(censuses) >= 3:
                break
            await asyncio.sleep(0.01)
        assert not task.done(), task
        assert len(censuses) >= 3
        assert "Permission denied" in caplog.text
    finally:
        task.cancel()

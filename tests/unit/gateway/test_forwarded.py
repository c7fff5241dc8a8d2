"""Whose X-Forwarded-For names the caller (sless.gateway.forwarded)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sless.config import GatewaySettings
from sless.gateway.forwarded import LOOPBACK_PROXIES, forwarded_client, trusted_proxies

LOOPBACK = trusted_proxies(LOOPBACK_PROXIES)


def _xff(*values: str) -> list[tuple[bytes, bytes]]:
    return [(b"host", b"gw"), *((b"x-forwarded-for", v.encode()) for v in values)]


def test_a_trusted_proxy_names_the_caller_it_appended() -> None:
    assert forwarded_client(("127.0.0.1", 5), _xff("203.0.113.7"), LOOPBACK) == ("203.0.113.7", 0)
    # what the caller sent comes first; the proxy's own entry is the last one
    chain = _xff("198.51.100.1, 203.0.113.7")
    assert forwarded_client(("127.0.0.1", 5), chain, LOOPBACK) == ("203.0.113.7", 0)
    two = _xff("198.51.100.1", "2001:db8::1")
    assert forwarded_client(("::1", 5), two, LOOPBACK) == ("2001:db8::1", 0)


def test_anyone_else_or_a_bad_entry_changes_nothing() -> None:
    assert forwarded_client(("192.0.2.9", 5), _xff("203.0.113.7"), LOOPBACK) is None
    assert forwarded_client(("127.0.0.1", 5), _xff("unknown"), LOOPBACK) is None
    assert forwarded_client(("127.0.0.1", 5), _xff("203.0.113.7:443"), LOOPBACK) is None
    assert forwarded_client(("127.0.0.1", 5), _xff(), LOOPBACK) is None
    assert forwarded_client(None, _xff("203.0.113.7"), LOOPBACK) is None
    assert forwarded_client(("127.0.0.1", 5), _xff("203.0.113.7"), frozenset()) is None


def test_the_setting_is_checked_at_start() -> None:
    assert trusted_proxies(" 10.0.0.5 , ::1,") == {"10.0.0.5", "::1"}
    assert trusted_proxies("") == frozenset()
    assert GatewaySettings(forwarded_allow_ips="").forwarded_allow_ips == ""
    with pytest.raises(ValidationError, match="'localhost' is not an IP address"):
        GatewaySettings(forwarded_allow_ips="127.0.0.1,localhost")

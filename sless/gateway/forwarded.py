"""The caller's address behind a reverse proxy the provider runs (``X-Forwarded-For``).

The address a request came from feeds the failed-login limit per address, the audit log
and the ``X-Forwarded-For`` a function sees. Behind a proxy on the same machine every
request comes from the proxy, so one caller's failed logins would lock out all of them.
A peer in ``SLESS_GATEWAY_FORWARDED_ALLOW_IPS`` (loopback by default, as uvicorn's
``--forwarded-allow-ips``) is trusted to name the caller: the last entry of its
``X-Forwarded-For``, the one it appended itself. Anyone else's header is ignored, and so
is an entry that is not an IP address. The same rule holds whichever HTTP server runs.
"""

from __future__ import annotations

import ipaddress

#: what ``SLESS_GATEWAY_FORWARDED_ALLOW_IPS`` is by default
LOOPBACK_PROXIES = "127.0.0.1,::1"
#: set in the ASGI scope when its client came from a trusted X-Forwarded-For (which then
#: reaches the function as it is, not with the caller appended a second time)
FORWARDED = "sless.forwarded"


def trusted_proxies(setting: str) -> frozenset[str]:
    """The addresses of the comma-separated setting (checked by sless.config)."""
    entries = filter(None, (entry.strip() for entry in setting.split(",")))
    return frozenset(str(ipaddress.ip_address(entry)) for entry in entries)


def forwarded_client(
    client: tuple[str, int] | None, headers: list[tuple[bytes, bytes]], trusted: frozenset[str]
) -> tuple[str, int] | None:
    """The caller named by a trusted peer's ``X-Forwarded-For``, or None (keep ``client``)."""
    if client is None or client[0] not in trusted:
        return None
    last = None
    for key, value in headers:
        if key == b"x-forwarded-for":
            last = value  # a proxy appends: the last header's last entry is its own
    if last is None:
        return None
    entry = last.rsplit(b",", 1)[-1].strip().decode("latin-1")
    try:
        address = ipaddress.ip_address(entry)
    except ValueError:
        return None
    return str(address), 0

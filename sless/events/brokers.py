"""The broker a RabbitMQ trigger names: which addresses the platform connects to.

The gateway (embedded mode) or ``sless events`` (Kubernetes mode) connects to a trigger's
broker itself, from the provider's network: no sandbox and no egress allowlist stand in
between, and RabbitMQ's ``guest`` works from loopback, exactly where the platform connects
from. So a broker meets the rule of function egress (``sless.models.reach``: loopback,
link-local and metadata, the private ranges the provider did not open, this machine's own
addresses), except the brokers the provider runs for its tenants
(``SLESS_EVENTS_BROKERS_ALLOWED``).

One mechanism decides, on every connect: ``CheckedTransport``, the socket factory of the
AMQP connection, so the first connect and each reconnect after the broker went away (the
consumer's own, ``sless.events.consuming``: the connection never reconnects by itself)
alike. It resolves the name once, refuses it if any address is refused, and connects to
an address it checked, never by name: a name that answers the check with a public address
and the connect with loopback (DNS rebinding) gets nowhere. TLS still verifies the
broker's name.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Collection
from typing import Any
from urllib.parse import urlsplit

from aiormq.connection import TransportFactory
from aiormq.exceptions import AMQPConnectionError
from yarl import URL

from sless.sandbox.egress import egress_reach


async def _getaddrinfo(host: str, port: int) -> list[Any]:
    """The one place a broker's name is resolved."""
    return await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)


class BrokerUrlRefused(Exception):
    """The broker URL is not one the platform connects to (the message never holds it)."""


def check_broker_scheme(url: str) -> tuple[str, int]:
    """``(host, port)`` of an ``amqp://``/``amqps://`` URL, else ``BrokerUrlRefused``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise BrokerUrlRefused("the broker URL does not parse") from None
    if parts.scheme not in ("amqp", "amqps") or not parts.hostname:
        raise BrokerUrlRefused("the broker URL must be amqp://host... or amqps://host...")
    return parts.hostname, port or (5671 if parts.scheme == "amqps" else 5672)


async def broker_addresses(host: str, port: int, brokers_allowed: Collection[str]) -> list[str]:
    """The addresses ``host`` resolves to, in order, once: each one passes the rule of
    function egress (``sless.models.reach``) unless the provider lists ``host:port`` as
    its own (``brokers_allowed``, as URLs name them); else ``BrokerUrlRefused``."""
    allowed = f"{host.lower().rstrip('.')}:{port}" in {b.lower() for b in brokers_allowed}
    try:
        infos = await _getaddrinfo(host, port)
    except OSError:
        raise BrokerUrlRefused("the broker host does not resolve") from None
    addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))
    if not addresses:
        raise BrokerUrlRefused("the broker host does not resolve")
    reach = egress_reach()
    for address in addresses:
        why = None if allowed else reach.refusal(ipaddress.ip_address(address))
        if why is None:
            continue
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:  # a name: never say what an internal name resolves to
            why = "the broker host resolves to an address the provider refuses"
        raise BrokerUrlRefused(
            f"broker refused: {why} (a broker of the provider's own is listed in"
            " SLESS_EVENTS_BROKERS_ALLOWED)"
        )
    return addresses


class CheckedTransport(TransportFactory):
    """How every connection to one trigger's broker is made (aiormq's transport factory):
    to an address ``broker_addresses`` checked just now, else ``BrokerUrlRefused``."""

    def __init__(self, brokers_allowed: Collection[str]) -> None:
        self.brokers_allowed = tuple(brokers_allowed)

    async def create(
        self, url: URL, **kwargs: Any
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        ssl_provider = kwargs.pop("ssl_context_provider", None)
        host, port = url.host or "", url.port or 5672
        addresses = await broker_addresses(host, port, self.brokers_allowed)
        ssl = None
        if url.scheme == "amqps" and ssl_provider is not None:
            ssl = await ssl_provider.get_context()
        failed: OSError | None = None
        for address in addresses:
            try:
                return await asyncio.open_connection(
                    address, port, ssl=ssl, server_hostname=host if ssl else None, **kwargs
                )
            except OSError as e:
                failed = e
        assert failed is not None  # broker_addresses returns at least one
        raise AMQPConnectionError(*failed.args) from failed

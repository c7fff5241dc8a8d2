"""The broker a RabbitMQ trigger names: which URLs the platform connects to.

The gateway (embedded mode) or ``sless events`` (Kubernetes mode) connects to a trigger's
broker itself, from the provider's network: no sandbox and no egress allowlist stand in
between, and RabbitMQ's ``guest`` works from loopback, exactly where the platform connects
from. So a broker URL meets the rule of function egress (``sless.models.reach``: loopback,
link-local and metadata, the private ranges the provider did not open, this machine's own
addresses), except the brokers the provider runs for its tenants
(``SLESS_EVENTS_BROKERS_ALLOWED``). The check runs before every connect.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Collection
from urllib.parse import urlsplit

from sless.sandbox.egress import egress_reach


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


async def check_broker_url(url: str, brokers_allowed: Collection[str] = ()) -> None:
    """Refuse a broker the gateway's machine must not reach for a tenant: the rule of
    function egress (``sless.models.reach``), bar the provider's own ``brokers_allowed``
    (``host:port`` as URLs name them). Checked before every connect; a name resolving
    elsewhere between this check and the connect is a known limit."""
    host, port = check_broker_scheme(url)
    if f"{host.lower().rstrip('.')}:{port}" in {b.lower() for b in brokers_allowed}:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port)
    except OSError:
        raise BrokerUrlRefused("the broker host does not resolve") from None
    reach = egress_reach()
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        why = reach.refusal(address)
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

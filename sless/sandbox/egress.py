"""Egress allowlist for embedded mode: the only way out of a worker's network namespace.

A worker never shares the host's network: it runs in its own network namespace with only
loopback. When its function has an ``egress`` allowlist, the gateway runs an HTTP proxy
for it on a Unix socket that is bind-mounted into the sandbox, and the runtime server
forwards ``127.0.0.1:3128`` inside the sandbox to that socket. ``HTTP_PROXY`` and
``HTTPS_PROXY`` point there, so ordinary HTTP clients work; anything that ignores the proxy
finds no route at all.

The proxy accepts ``CONNECT host:port`` (TLS tunnels) and absolute-form plain HTTP
requests, and only to destinations the allowlist names (``host:port`` exactly, or an IP
inside ``CIDR:port``). Whatever the allowlist says, it never connects where the provider's
rule refuses (``sless.models.reach``): loopback, link-local (the cloud metadata service,
169.254.169.254 and fd00:ec2::254), multicast or unspecified addresses; private, shared
and reserved ranges unless the provider allows them (``SLESS_EGRESS_PRIVATE_ALLOWED``);
and the addresses of the gateway machine's own interfaces (read from ``/proc/net``, in the
gateway's network namespace, for a few seconds at a time), where its database, broker and
admin ports may listen. Names are resolved here, every resolved address is checked, and
the connection goes to the address that was checked (no DNS rebinding between check and
connect). See OWASP's SSRF prevention cheat sheet for the address classes.

Each connection takes a slot of its function and its tenant for as long as it is open
(``sless.sandbox.tunnels``): past either cap it is refused with 429 and the reason, so no
tenant holds more of the gateway's descriptors than its cap.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sless.models.reach import EgressReach, IPAddress, IPNetwork
from sless.sandbox.tunnels import Slot, TunnelCaps
from sless.tasks import wait_for

log = logging.getLogger(__name__)

#: where the runtime forwards from inside the sandbox
PROXY_PORT = 3128
_MAX_HEADER = 16 * 1024
_CONNECT_TIMEOUT_S = 10.0
_IDLE_TIMEOUT_S = 300.0
#: how long a refused connection may take to send its request head before it reads 429
_REFUSED_HEAD_TIMEOUT_S = 1.0

#: how long the machine's own addresses are trusted before they are read again
_OWN_TTL_S = 5.0
_own_cache: tuple[float, frozenset[IPAddress]] | None = None


@dataclass(frozen=True)
class EgressRule:
    port: int
    host: str | None = None
    network: IPNetwork | None = None

    @classmethod
    def parse(cls, rule: str) -> EgressRule:
        host, _, port = rule.rpartition(":")
        host = host.strip("[]").lower()
        try:
            return cls(port=int(port), network=ipaddress.ip_network(host, strict=False))
        except ValueError:
            return cls(port=int(port), host=host.rstrip("."))


def forbidden(address: IPAddress, reach: EgressReach | None = None) -> bool:
    """Refused whatever the allowlist says (``reach``: the provider's rule; by default no
    private range allowed and no own address known)."""
    return (reach or EgressReach()).refusal(address) is not None


def allowed(
    host: str,
    port: int,
    addresses: Sequence[IPAddress],
    rules: Sequence[EgressRule],
    reach: EgressReach | None = None,
) -> IPAddress | None:
    """The address to connect to, or None when the destination is not allowed.

    ``addresses`` are what ``host`` resolved to (or the literal address itself); ``reach``
    is the provider's rule over every allowlist (``sless.models.reach``).
    """
    host = _normal(host)
    usable = [a for a in addresses if not forbidden(a, reach)]
    if not usable or len(usable) != len(addresses):
        # a name that resolves to a refused address is refused outright
        return None
    for rule in rules:
        if rule.port != port:
            continue
        if rule.host is not None and rule.host == host:
            return usable[0]
        if rule.network is not None:
            inside = [a for a in usable if a.version == rule.network.version and a in rule.network]
            if inside:
                return inside[0]
    return None


def own_addresses() -> frozenset[IPAddress]:
    """Every address configured on this machine's interfaces (of this network namespace),
    read again after a few seconds: the ``host LOCAL`` entries of ``/proc/net/fib_trie``
    and every entry of ``/proc/net/if_inet6``. No subprocess; an unreadable file gives
    none of its addresses (and is logged)."""
    global _own_cache
    now = time.monotonic()
    if _own_cache is not None and now - _own_cache[0] < _OWN_TTL_S:
        return _own_cache[1]
    found: set[IPAddress] = set()
    try:
        previous = ""
        for line in Path("/proc/net/fib_trie").read_text().splitlines():
            text = line.strip()
            if text.startswith("|--"):
                previous = text[3:].strip()
            elif text.startswith("/32 host LOCAL") and previous:
                found.add(ipaddress.ip_address(previous))
    except (OSError, ValueError) as e:
        log.warning("cannot read this machine's IPv4 addresses: %s", e)
    try:
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            hexa = line.split()[0] if line.strip() else ""
            if len(hexa) == 32:
                found.add(ipaddress.IPv6Address(int(hexa, 16)))
    except FileNotFoundError:
        pass  # IPv6 turned off: no IPv6 address to refuse
    except (OSError, ValueError) as e:
        log.warning("cannot read this machine's IPv6 addresses: %s", e)
    addresses = frozenset(found)
    _own_cache = (now, addresses)
    return addresses


def egress_reach(private_allowed: Sequence[IPNetwork] = ()) -> EgressReach:
    """The provider's rule with this machine's own addresses as they are now."""
    return _reach(tuple(private_allowed), own_addresses())


@functools.lru_cache(maxsize=32)
def _reach(private_allowed: tuple[IPNetwork, ...], own: frozenset[IPAddress]) -> EgressReach:
    return EgressReach(private_allowed, own)


def _why_refused(host: str, addresses: Sequence[IPAddress], reach: EgressReach) -> str:
    """The provider's reason, when it is the provider's rule that refuses: for an address
    the tenant named, the rule; for a name, only that it resolves to a refused address
    (never which one: a tenant does not learn what internal names resolve to)."""
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        refused = any(reach.refusal(a) is not None for a in addresses)
        return ": it resolves to an address the provider refuses" if refused else ""
    reason = reach.refusal(literal)
    return f": {reason}" if reason is not None else ""


def _normal(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


async def resolve_allowed(
    host: str, port: int, rules: Sequence[EgressRule], private_allowed: Sequence[IPNetwork] = ()
) -> IPAddress | None:
    """Resolve ``host`` once and check it as the proxy does, under the provider's rule
    (``private_allowed``, this machine's own addresses): the address to connect to
    (connect to exactly that one: no DNS rebinding), or None when refused.

    For connections the gateway makes on a function's behalf (``sless.events.callbacks``).
    """
    addresses = await _resolve(host, port)
    return allowed(host, port, addresses, rules, egress_reach(private_allowed))


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [ipaddress.ip_address(info[4][0]) for info in infos]


class EgressProxy:
    """An allowlisting HTTP proxy on a Unix socket, one per function version."""

    def __init__(
        self,
        socket_path: Path,
        rules: Sequence[str],
        *,
        name: str = "",
        provider: Sequence[tuple[str, int]] = (),
        caps: TunnelCaps | None = None,
        tenant: str = "",
        private_allowed: Sequence[IPNetwork] = (),
    ) -> None:
        self.socket_path = socket_path
        self.rules = [EgressRule.parse(r) for r in rules]
        #: the private ranges the provider allows (``SLESS_EGRESS_PRIVATE_ALLOWED``)
        self.private_allowed = tuple(private_allowed)
        self.name = name
        #: the connections this proxy's tenant and function may hold (None: no cap, the
        #: build proxy, whose installers the platform runs one at a time)
        self.caps = caps
        self.tenant = tenant
        #: ``(host, port)`` the provider configured (a package index, a registry): reached
        #: by that exact name even when it is on a local address (a mirror on loopback)
        self.provider = frozenset((_normal(host), port) for host, port in provider)
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: counters for tests and metrics
        self.allowed_count = 0
        self.refused_count = 0

    async def start(self) -> None:
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(self.socket_path), limit=_MAX_HEADER
        )
        # the sandboxed worker runs as another uid: it must be able to connect
        self.socket_path.chmod(0o666)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        slot = self.caps.acquire(self.tenant, self.name) if self.caps is not None else None
        try:
            if isinstance(slot, str):
                await self._refuse_over_cap(reader, writer, slot)
            else:
                await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            if self.caps is not None and isinstance(slot, Slot):
                self.caps.release(slot)
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await wait_for(reader.readuntil(b"\r\n\r\n"), _CONNECT_TIMEOUT_S)
        request_line, _, rest = head.partition(b"\r\n")
        method, _, remainder = request_line.decode("latin-1").partition(" ")
        target = remainder.rpartition(" ")[0]
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            tunnel = True
        else:
            # absolute-form: http://host[:port]/path
            if not target.lower().startswith("http://"):
                await self._refuse(writer, 400, "only CONNECT and absolute http:// URLs")
                return
            authority = target[7:].split("/", 1)[0]
            host, sep, port_text = authority.rpartition(":")
            if not sep or "]" in port_text:
                host, port_text = authority, "80"
            path = "/" + target[7:].split("/", 1)[1] if "/" in target[7:] else "/"
            head = f"{method} {path} HTTP/1.1\r\n".encode("latin-1") + rest
            tunnel = False
        if not port_text.isdigit():
            await self._refuse(writer, 400, "bad destination")
            return
        port = int(port_text)
        addresses = await _resolve(host, port)
        reach = egress_reach(self.private_allowed)
        if (_normal(host), port) in self.provider:
            address = addresses[0] if addresses else None
        else:
            address = allowed(host, port, addresses, self.rules, reach)
        if address is None:
            self.refused_count += 1
            why = _why_refused(host, addresses, reach)
            log.info("egress of %s to %s:%d refused%s", self.name, host[:100], port, why)
            await self._refuse(writer, 403, f"egress to {host[:100]}:{port} is not allowed{why}")
            return
        try:
            up_reader, up_writer = await wait_for(
                asyncio.open_connection(str(address), port), _CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError):
            await self._refuse(writer, 502, "cannot connect")
            return
        self.allowed_count += 1
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
        else:
            up_writer.write(head)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    async def _refuse_over_cap(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, reason: str
    ) -> None:
        """429 with the reason, after the request head (for a client that reads its answer
        only once it has sent its request), which may take a moment, not the proxy's whole
        head timeout: the slot it did not get is not held meanwhile."""
        self.refused_count += 1
        with contextlib.suppress(TimeoutError):
            await wait_for(reader.readuntil(b"\r\n\r\n"), _REFUSED_HEAD_TIMEOUT_S)
        await self._refuse(writer, 429, reason, retry_after=1)

    @staticmethod
    async def _refuse(
        writer: asyncio.StreamWriter, status: int, message: str, *, retry_after: int | None = None
    ) -> None:
        body = message.encode()
        retry = f"Retry-After: {retry_after}\r\n" if retry_after is not None else ""
        writer.write(
            f"HTTP/1.1 {status} Refused\r\nContent-Type: text/plain\r\n{retry}"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await wait_for(reader.read(64 * 1024), _IDLE_TIMEOUT_S):
            writer.write(chunk)
            await writer.drain()
    except (OSError, TimeoutError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()

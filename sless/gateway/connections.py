"""The gateway's connections per client, counted from the kernel and cut past the cap.

nginx's ``limit_conn`` counts connections per client address at accept. granian, the
default HTTP server, accepts in its own Rust thread and has no hook per connection: its
only bound is ``backpressure``, one global count of connections held (128 by default,
which is why about 150 slow connections starved every other client: the 129th waited in
the listen queue behind them). An accept layer of our own in front of it would put a
proxy hop on every call. So this guard counts instead of intercepting: every
``interval_s`` it asks the kernel for the established TCP connections on the gateway's
port (``sless.gateway.sockdiag``: netlink, filtered by port in the kernel; the text of
``/proc/self/net/tcp{,6}`` where netlink is refused), groups them by client address
and, for a client above ``max_connections_per_client``, closes its newest connections
beyond the cap that have no request in flight (``shutdown(2)`` on the server's own
socket, found by inode; a connection that never sent a request is first answered 503
with ``Retry-After``). A client can so exceed its cap for one interval at most, while the global cap
(granian's ``backpressure``, uvicorn's ``limit_concurrency``) bounds what all clients
hold together. The census costs nothing on the request path; off it, one walk of the
kernel's connection table per listening address family and interval (about 1.3 ms of
CPU here; reading ``/proc`` took 8.8 ms, formatting every socket of the namespace).

A trusted proxy's connections (``SLESS_GATEWAY_FORWARDED_ALLOW_IPS``) are not counted
here: its callers are counted per ``X-Forwarded-For`` client by sless.gateway.admission.

uvicorn has no request-head timeout (``timeout_keep_alive`` stops at the first byte of
the next request), so under uvicorn the guard also closes any connection with no request
in flight for longer than ``header_timeout_s`` since it was first seen or last finished
a request: hyper does exactly that for granian (``header_read_timeout``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
import time
from collections import defaultdict
from dataclasses import dataclass

from sless.gateway import sockdiag
from sless.gateway.admission import Activity, Peer, RateLimitedWarning

#: how often the connections are counted
INTERVAL_S = 0.5
#: what a connection cut before its first request reads
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Type: application/json\r\nContent-Length: 74\r\n\r\n"
    b'{"error":{"code":"too_many_connections","message":"too many connections"}}'
)
_ESTABLISHED = "01"


@dataclass(frozen=True)
class Connection:
    inode: int
    client: str
    port: int


@dataclass(frozen=True)
class GuardLimits:
    port: int
    max_per_client: int
    trusted_proxies: frozenset[str]
    #: close connections idle this long (None: the HTTP server does it itself)
    idle_timeout_s: float | None
    #: the address families the gateway listens on (``listening_families``)
    families: tuple[int, ...] = (socket.AF_INET, socket.AF_INET6)


def listening_families(host: str) -> tuple[int, ...]:
    """The address families of the connections a listener on ``host`` accepts: an IPv6
    listener's IPv4 clients are IPv6 sockets (v4-mapped); a name may resolve to both."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return (socket.AF_INET, socket.AF_INET6)
    return (socket.AF_INET,) if address.version == 4 else (socket.AF_INET6,)


def established(
    port: int, families: tuple[int, ...] = (socket.AF_INET, socket.AF_INET6)
) -> list[Connection]:
    """The established connections whose local port is ``port``, in this network namespace."""
    found = sockdiag.established(port, families)
    if found is not None:
        return [Connection(inode, client, remote) for inode, client, remote in found]
    tables = tuple(
        table
        for family, table in ((socket.AF_INET, "tcp"), (socket.AF_INET6, "tcp6"))
        if family in families
    )
    return proc_established(port, tables)


def proc_established(port: int, tables: tuple[str, ...] = ("tcp", "tcp6")) -> list[Connection]:
    """``established`` read from the text of ``/proc/self/net/tcp{,6}``."""
    needle = f":{port:04X} "
    found: list[Connection] = []
    for table in tables:
        try:
            with open(f"/proc/self/net/{table}") as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            if needle not in line:
                continue
            fields = line.split()
            if not fields[1].endswith(needle[:-1]) or fields[3] != _ESTABLISHED:
                continue
            address, _, remote_port = fields[2].partition(":")
            found.append(Connection(int(fields[9]), proc_address(address), int(remote_port, 16)))
    return found


def proc_address(hex_address: str) -> str:
    """An address of /proc/net/tcp{,6} (32-bit words in host order, little-endian here)."""
    raw = bytes.fromhex(hex_address)
    packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(packed) == 4:
        return str(ipaddress.IPv4Address(packed))
    v6 = ipaddress.IPv6Address(packed)
    return str(v6.ipv4_mapped) if v6.ipv4_mapped is not None else str(v6)


def to_close(
    connections: list[Connection],
    activity: Activity,
    limits: GuardLimits,
    first_seen: dict[int, float],
    now: float,
) -> dict[str, list[Connection]]:
    """Per client, the connections to cut: the newest beyond its cap, and (with an idle
    timeout) the idle ones; never one with a request in flight. Pure: no I/O."""
    per_client: dict[str, list[Connection]] = defaultdict(list)
    for connection in connections:
        per_client[connection.client].append(connection)
    cut: dict[str, list[Connection]] = {}
    for client, held in per_client.items():
        idle = [c for c in held if not activity.busy.get((c.client, c.port))]
        chosen: set[Connection] = set()
        if client not in limits.trusted_proxies and len(held) > limits.max_per_client:
            newest_first = sorted(idle, key=lambda c: c.inode, reverse=True)
            chosen.update(newest_first[: len(held) - limits.max_per_client])
        if limits.idle_timeout_s is not None:
            for c in idle:
                since = max(
                    first_seen.get(c.inode, now), activity.finished_at.get((c.client, c.port), 0.0)
                )
                if now - since > limits.idle_timeout_s:
                    chosen.add(c)
        if chosen:
            cut[client] = sorted(chosen, key=lambda c: c.inode)
    return cut


def close_sockets(inodes: dict[int, bool]) -> int:
    """Shut down this process's sockets with these inodes (True: answer 503 first).

    The server keeps its file descriptor and closes it when it sees the connection end;
    the descriptor is duplicated and checked against the inode first, so a number reused
    meanwhile by another socket (a worker's, PostgreSQL's) is never touched.
    """
    closed = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if not target.startswith("socket:["):
            continue
        inode = int(target[8:-1])
        if inode not in inodes:
            continue
        try:
            dup = os.dup(int(name))
        except OSError:
            continue
        with socket.socket(fileno=dup) as sock:
            if os.fstat(dup).st_ino != inode:
                continue
            with contextlib.suppress(OSError):
                if inodes[inode]:
                    sock.send(REFUSAL, socket.MSG_DONTWAIT)
                sock.shutdown(socket.SHUT_RDWR)
                closed += 1
    return closed


class ConnectionGuard:
    def __init__(
        self, limits: GuardLimits, activity: Activity, interval_s: float = INTERVAL_S
    ) -> None:
        self.limits = limits
        self.activity = activity
        self.interval_s = interval_s
        self._first_seen: dict[int, float] = {}
        self._warn = RateLimitedWarning()

    async def run(self) -> None:
        """A census every ``interval_s`` for the gateway's lifetime: a census that fails
        is logged and the next one runs (a guard that ended would lift the cap)."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                self.check()
            except Exception as e:
                self._warn("the connection census failed: %s: %s", type(e).__name__, e)

    def check(self) -> None:
        now = time.monotonic()
        connections = established(self.limits.port, self.limits.families)
        self._forget(connections, now)
        cut = to_close(connections, self.activity, self.limits, self._first_seen, now)
        if not cut:
            return
        fresh = {
            c.inode: (c.client, c.port) not in self.activity.finished_at
            for held in cut.values()
            for c in held
        }
        close_sockets(fresh)
        held = {client: sum(1 for c in connections if c.client == client) for client in cut}
        idle = self.limits.idle_timeout_s
        why = f"cap {self.limits.max_per_client} per client" + (
            f", or idle over {idle:g} s" if idle is not None else ""
        )
        for client, gone in cut.items():
            self._warn(
                "closed %d connection(s) of client %s (%d open; %s)",
                len(gone),
                client,
                held[client],
                why,
            )

    def _forget(self, connections: list[Connection], now: float) -> None:
        """Keep first-seen times and finished-request times of open connections only."""
        alive = {c.inode for c in connections}
        peers: set[Peer] = {(c.client, c.port) for c in connections}
        self._first_seen = {i: self._first_seen.get(i, now) for i in alive}
        finished = self.activity.finished_at
        for peer in [p for p in finished if p not in peers]:
            del finished[peer]

"""A real test host: a network namespace joined to this one by a veth pair.

Egress rules refuse loopback, and the Kubernetes API server refuses loopback addresses in
an EndpointSlice, so a destination that a function, a callback or the gateway reaches has
to be another host. These helpers make one (``ip netns``; needs root): test traffic then
goes only to an address *inside* a namespace the test made, never to one of the
machine's own namespace beyond loopback.

- ``netns_host`` runs a server command inside a fresh namespace, waits until it answers
  HTTP, and removes everything afterwards.
- ``TestHost`` is a longer-lived one: ``listen()`` hands out TCP sockets bound inside it
  (made by a thread that entered the namespace, so in-process servers such as aiohttp
  or ``http.server`` can serve on them), and ``command()`` prefixes a command so that it
  runs inside it.

The veth pair's near end (``host_ip``: 10.251.0.1, 10.251.1.1, 10.252.0.1) needs an
address on the client's side: the clients under test (the gateway in the pytest process,
a bubblewrap sandbox sharing its network for egress, the test's httpx) live there, and a
packet leaving a namespace carries an address of that namespace as its source. That side
is never the machine's own namespace: ``scripts/test`` runs pytest inside a namespace it
made (``sless-tests``, only loopback besides these veths), and building a test host from
the machine's namespace fails (``_not_in_the_machines_namespace``). Within the test's
namespace, no traffic targets the near end either:

- nothing listens on it: every server binds the far address inside the namespace
  (``TestHost.listen``; ``netns_host``'s command runs inside it), and no test names
  ``host_ip`` as a destination (only as the ``ip addr`` of the near end), except to ask
  the egress proxy for it and be refused before any connection: it is an address of the
  gateway's own machine (``tests/security/test_tenant_egress_to_private_network.py``);
- the only packets addressed to it are the replies of the namespace's servers to the
  connections the client side opened, and that is enforced: ``_guard`` loads an
  nftables table *inside the namespace* (never in the machine's) whose output chain
  passes loopback and replies of established connections and drops everything else
  (IPv6 neighbour discovery included; only ARP, which the replies need, is not IP), so
  nothing inside can open a connection to the near end, to the machine, or anywhere;
  ``tests/security/test_test_hosts.py`` checks it;
- nothing is routed anywhere else: the test run's namespace gets only the /30 of the veth
  (no route beyond it), the namespace has no default route (``route_back``, the node
  tests' pod CIDR via the near end, is their replies' way back to pods on the test node).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator, Sequence

import httpx
import pytest


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def _not_in_the_machines_namespace() -> None:
    """The near end of a veth pair gets an address of the namespace this process runs in;
    that must never be the machine's own. ``scripts/test`` runs pytest in a namespace it
    made (``sless-tests``; the node tier in the node's) and names it in
    ``SLESS_TEST_NETNS``: a test host is built only when this process is really in it."""
    name = os.environ.get("SLESS_TEST_NETNS", "")
    path = f"/run/netns/{name}"
    if not name or "/" in name or not os.path.exists(path):
        here = None
    else:
        here = os.stat(path).st_ino == os.stat("/proc/self/ns/net").st_ino
    if not here:
        pytest.fail(
            "this test builds a test host, whose veth needs an address on this side: run it"
            " through scripts/test (e.g. scripts/test tests/security), which runs pytest in"
            " a network namespace of its own (SLESS_TEST_NETNS), never in the machine's"
        )


#: loaded inside the test host's namespace: it may answer, never start a connection
GUARD_TABLE = "sless_test_host"
_GUARD = f"""
table inet {GUARD_TABLE} {{
    chain output {{
        type filter hook output priority 0; policy accept;
        oif "lo" accept
        ct state established,related accept
        meta nfproto ipv4 counter drop
        counter drop
    }}
}}
"""


def _guard(ns: str) -> None:
    """Only replies leave ``ns`` (see above). Fails when nftables is missing: without the
    guard the test host could reach the machine's own addresses."""
    if shutil.which("nft") is None:
        pytest.fail("nftables (`nft`) is needed to guard the test host")
    subprocess.run(
        ["ip", "netns", "exec", ns, "nft", "-f", "-"],
        input=_GUARD.encode(),
        check=True,
        capture_output=True,
    )


def guard_drops(ns: str) -> int:
    """IPv4 packets the guard of ``ns`` dropped (something inside tried to start a
    connection; IPv6 neighbour discovery on the link is dropped too, not counted here)."""
    out = subprocess.run(
        ["ip", "netns", "exec", ns, "nft", "list", "table", "inet", GUARD_TABLE],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"nfproto ipv4 counter packets (\d+) bytes \d+ drop", out)
    if match is None:
        raise AssertionError(f"the guard of {ns} has no drop counter:\n{out}")
    return int(match.group(1))


@contextlib.contextmanager
def netns_host(
    host_ip: str,
    test_host_ip: str,
    port: int,
    command: Sequence[str],
    *,
    route_back: str | None = None,
) -> Iterator[str]:
    """Run ``command`` on a host at ``test_host_ip`` (a /30 shared with ``host_ip`` here);
    yields ``http://test_host_ip:port/`` once it answers. ``route_back`` (a CIDR, e.g. the
    pods behind a node's bridge) is routed back through ``host_ip``; only when asked: a
    default route there made the host refuse connections from this side."""
    if shutil.which("ip") is None:
        pytest.fail("iproute2 (`ip`) is needed to build the test host")
    _not_in_the_machines_namespace()
    ns = f"sless-t{uuid.uuid4().hex[:6]}"
    veth = f"vs{uuid.uuid4().hex[:6]}"
    _ip("netns", "add", ns)
    server = None
    try:
        _ip("link", "add", veth, "type", "veth", "peer", "name", f"{veth}p")
        _ip("link", "set", f"{veth}p", "netns", ns)
        _ip("addr", "add", f"{host_ip}/30", "dev", veth)
        _ip("link", "set", veth, "up")
        _ip("-n", ns, "addr", "add", f"{test_host_ip}/30", "dev", f"{veth}p")
        _ip("-n", ns, "link", "set", f"{veth}p", "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _guard(ns)
        if route_back is not None:
            # replies to callers beyond the /30 (pods behind a node's bridge) go back this way
            _ip("-n", ns, "route", "add", route_back, "via", host_ip)
        server = subprocess.Popen(
            ["ip", "netns", "exec", ns, *command],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://{test_host_ip}:{port}/"
        deadline = time.monotonic() + 10
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        subprocess.run(["ip", "link", "del", veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


_CLONE_NEWNET = 0x40000000


class TestHost:
    """A network namespace at ``address``, reached from here through a veth pair."""

    __test__ = False  # not a test class, whatever pytest thinks of the name

    def __init__(self, host_ip: str, address: str) -> None:
        if shutil.which("ip") is None:
            pytest.fail("iproute2 (`ip`) is needed to build the test host")
        _not_in_the_machines_namespace()
        self.address = address
        self.namespace = f"sless-h{uuid.uuid4().hex[:6]}"
        self._veth = f"vh{uuid.uuid4().hex[:6]}"
        _ip("netns", "add", self.namespace)
        try:
            _ip("link", "add", self._veth, "type", "veth", "peer", "name", f"{self._veth}p")
            _ip("link", "set", f"{self._veth}p", "netns", self.namespace)
            _ip("addr", "add", f"{host_ip}/30", "dev", self._veth)
            _ip("link", "set", self._veth, "up")
            _ip("-n", self.namespace, "addr", "add", f"{address}/30", "dev", f"{self._veth}p")
            _ip("-n", self.namespace, "link", "set", f"{self._veth}p", "up")
            _ip("-n", self.namespace, "link", "set", "lo", "up")
            _guard(self.namespace)
        except BaseException:
            self.remove()
            raise

    def listen(self, port: int = 0) -> socket.socket:
        """A listening TCP socket on ``address`` inside the namespace (``port`` 0: any)."""
        made: list[socket.socket | BaseException] = []

        def inside() -> None:
            # setns(CLONE_NEWNET) changes only this thread's namespace; the socket keeps
            # the namespace it was made in after the thread ends
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                with open(f"/run/netns/{self.namespace}") as ns:
                    if libc.setns(ns.fileno(), _CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns failed")
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((self.address, port))
                sock.listen(128)
                made.append(sock)
            except BaseException as e:
                made.append(e)

        thread = threading.Thread(target=inside, name="netns-listen")
        thread.start()
        thread.join()
        result = made[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def command(self, *argv: str) -> list[str]:
        """``argv`` run inside the namespace (``ip netns exec``)."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def remove(self) -> None:
        subprocess.run(["ip", "link", "del", self._veth], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True, check=False)

"""A real test host: a network namespace joined to this one by a veth pair.

Egress rules refuse loopback, so a destination a function (or a callback) may reach has
to be another host. ``netns_host`` makes one (``ip netns``; needs root), runs a server
command inside it, waits until it answers HTTP, and removes everything afterwards.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence

import httpx
import pytest


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@contextlib.contextmanager
def netns_host(host_ip: str, test_host_ip: str, port: int, command: Sequence[str]) -> Iterator[str]:
    """Run ``command`` on a host at ``test_host_ip`` (a /30 shared with ``host_ip`` here);
    yields ``http://test_host_ip:port/`` once it answers."""
    if shutil.which("ip") is None:
        pytest.fail("iproute2 (`ip`) is needed to build the test host")
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
        # replies to callers beyond the /30 (pods behind a node's bridge) go back the same way
        _ip("-n", ns, "route", "add", "default", "via", host_ip)
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

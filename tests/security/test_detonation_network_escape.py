"""Attack: code under detonation tries to reach a real host from the recording network.

The detonation's network namespace must lead nowhere: every connection ends at the sink,
whatever address, port or protocol the code uses. The attacker stands inside the handler
and aims at a real server on a test host (``tests.netns``) that the test's own namespace can
reach: by raw IP (TCP), by a UDP datagram to it, by a DNS query sent straight to it, and
by IPv6. The test host must see none of it, and the sink must have recorded the TCP attempt
(so the attempt happened and was caught, not merely failed before it started).
Run with ``scripts/test`` (inside the test network namespace).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sless.validation.detonation import Detonation, detonate, unavailable
from tests.netns import netns_host

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

HOST_IP, TEST_HOST_IP, PORT = "10.251.29.1", "10.251.29.2", 8029

ATTACK = f"""
import socket, urllib.request
def handle(event, context):
    for url in ("http://{TEST_HOST_IP}:{PORT}/escaped-tcp", "http://[::ffff:{TEST_HOST_IP}]:{PORT}/v6"):
        try:
            urllib.request.urlopen(url, timeout=0.5).read()
        except Exception:
            pass
    for port in ({PORT}, 53):
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(b"escaped-udp", ("{TEST_HOST_IP}", port))
        except OSError:
            pass
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.settimeout(0.3)
        s.connect(("2001:db8::1", {PORT}))
    except OSError:
        pass
"""


async def test_nothing_leaves_the_recording_network(tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    log.touch()
    server = [
        "sh", "-c",
        f"exec {sys.executable} -m http.server {PORT} --bind {TEST_HOST_IP} 2>>{log}",
    ]  # fmt: skip
    code = tmp_path / "code"
    code.mkdir()
    (code / "handler.py").write_text(ATTACK)
    with netns_host(HOST_IP, TEST_HOST_IP, PORT, server):
        before = log.read_text().count("\n")
        stage = await detonate(code, "python3.11", "handler.handle", Detonation())
        after = log.read_text()
    assert after.count("\n") == before, f"the test host was reached: {after}"
    assert "escaped" not in after
    seen = [f for f in stage.findings if f.rule == "detonation-undeclared-egress"]
    assert any(
        TEST_HOST_IP in (f.evidence or "") and "escaped-tcp" in (f.evidence or "") for f in seen
    )

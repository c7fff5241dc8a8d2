"""Attack: a tenant's handler opens egress tunnels and holds them, to exhaust the gateway.

Every connection a function makes through its egress proxy is held by the gateway (the
proxy's end of the Unix socket and the upstream TCP connection): bounded only by the
workers' open-file limit times their instances, one tenant could take every descriptor of
the gateway. From inside a handler, the attack opens many ``CONNECT`` tunnels to an
allowed destination (a test host in a network namespace made here) and keeps them open
across calls. The proxy caps what a tenant holds at once (``SLESS_SANDBOX_EGRESS_TUNNELS_
PER_TENANT``) and what one function holds (``..._PER_FUNCTION``): past a cap the ``CONNECT``
reads 429 with the reason; another tenant's tunnels are not affected, and closing
tunnels frees their slots.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.netns import netns_host
from tests.support import deploy

pytestmark = pytest.mark.integration

HOST_IP = "10.251.5.1"
TEST_HOST_IP = "10.251.5.2"
PORT = 18081
TARGET = f"{TEST_HOST_IP}:{PORT}"
PER_TENANT = 8
PER_FUNCTION = 6

#: opens ``count`` CONNECT tunnels through the proxy the sandbox names (``HTTPS_PROXY``) and
#: keeps the ones that opened (a module global: they outlive the call); ``close`` closes
#: them all
HOARD = {
    "handler.py": (
        "import os, socket, urllib.parse\n"
        "HELD = []\n"
        "def _tunnel(target):\n"
        "    PROXY = urllib.parse.urlsplit(os.environ['HTTPS_PROXY'])\n"
        "    s = socket.create_connection((PROXY.hostname, PROXY.port), timeout=10)\n"
        "    s.sendall(f'CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n'.encode())\n"
        "    data = b''\n"
        "    while b'\\r\\n\\r\\n' not in data:\n"
        "        chunk = s.recv(4096)\n"
        "        if not chunk:\n"
        "            break\n"
        "        data += chunk\n"
        "    status = int(data.split(b' ', 2)[1]) if data.startswith(b'HTTP/') else 0\n"
        "    if status == 200:\n"
        "        HELD.append(s)\n"
        "        return status, ''\n"
        "    while chunk := s.recv(4096):\n"
        "        data += chunk\n"
        "    s.close()\n"
        "    return status, data.partition(b'\\r\\n\\r\\n')[2].decode()\n"
        "def handle(event, context):\n"
        "    query = event['query']\n"
        "    if query.get('close'):\n"
        "        closed = len(HELD)\n"
        "        for s in HELD:\n"
        "            s.close()\n"
        "        HELD.clear()\n"
        "        return {'closed': closed}\n"
        "    results = [_tunnel(query['target']) for _ in range(int(query['count']))]\n"
        "    return {'statuses': [s for s, _ in results],\n"
        "            'reasons': sorted({r for _, r in results if r}), 'held': len(HELD)}\n"
    )
}
#: one instance: its module global holds every tunnel the function keeps
SPEC = {"egress": [f"{TEST_HOST_IP}/32:{PORT}"], "max_instances": 1, "concurrency": 1}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.sandbox.egress_tunnels_per_tenant = PER_TENANT
    settings.sandbox.egress_tunnels_per_function = PER_FUNCTION
    return settings


@pytest.fixture(scope="module")
def test_host() -> Iterator[str]:
    """A threading HTTP server on its own host: each tunnel holds one of its connections."""
    command = [
        *(sys.executable, "-m", "http.server", str(PORT)),
        *("--bind", TEST_HOST_IP, "--directory", "/usr/share/doc"),
    ]
    with netns_host(HOST_IP, TEST_HOST_IP, PORT, command) as url:
        yield url


def _call(gateway: RunningGateway, ns: str, function: str, **query: object) -> dict[str, object]:
    response = httpx.get(f"{gateway.url}/fn/{ns}/{function}", params=query, timeout=60)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def _hoard(gateway: RunningGateway, ns: str, function: str, count: int) -> dict[str, object]:
    return _call(gateway, ns, function, target=TARGET, count=count)


def test_a_tenant_cannot_hold_more_egress_tunnels_than_its_cap(
    gateway: RunningGateway, test_host: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="sless.sandbox.tunnels")
    acme = gateway.tenant("acme")
    rival = gateway.tenant("rival")
    for name in ("one", "two"):
        deployed = deploy(acme, "sless-acme", name, HOARD, SPEC)
        assert deployed["status"]["phase"] == "Ready", deployed["status"]
    deploy(rival, "sless-rival", "theirs", HOARD, SPEC)

    # one function: its own cap first
    first = _hoard(gateway, "sless-acme", "one", 10)
    assert first["statuses"] == [200] * PER_FUNCTION + [429] * (10 - PER_FUNCTION), first
    assert first["held"] == PER_FUNCTION
    assert any("function" in r and str(PER_FUNCTION) in r for r in first["reasons"]), first

    # another function of the same tenant: the tenant's cap
    second = _hoard(gateway, "sless-acme", "two", 10)
    left = PER_TENANT - PER_FUNCTION
    assert second["statuses"] == [200] * left + [429] * (10 - left), second
    assert any("tenant" in r and str(PER_TENANT) in r for r in second["reasons"]), second

    # another tenant is not affected while acme holds all it may
    theirs = _hoard(gateway, "sless-rival", "theirs", PER_FUNCTION)
    assert theirs["statuses"] == [200] * PER_FUNCTION, theirs

    # closing tunnels frees their slots
    assert _call(gateway, "sless-acme", "one", close=1) == {"closed": PER_FUNCTION}
    again = _hoard(gateway, "sless-acme", "two", PER_FUNCTION)
    assert again["statuses"] == [200] * (PER_FUNCTION - left) + [429] * left, again
    assert again["held"] == PER_FUNCTION

    # the refusals are counted per tenant for the provider's metrics
    metrics = gateway.admin.get("/metrics").text
    acme_series = 'sless_egress_tunnels_refused_total{namespace="sless-acme"}'
    refused = [line for line in metrics.splitlines() if line.startswith(acme_series)]
    assert len(refused) == 1, metrics
    assert float(refused[0].rsplit(" ", 1)[1]) == 4 + 8 + 2, refused

    # the provider reads who hit a cap; the log names the tenant and function, never a
    # token, and one line per tenant at most every 10 s however many were refused
    lines = [r.getMessage() for r in caplog.records if r.name == "sless.sandbox.tunnels"]
    assert len(lines) == 1, lines
    assert "egress connection refused" in lines[0]
    assert "sless-acme/one" in lines[0]
    tokens = [c.headers["authorization"].removeprefix("Bearer ") for c in (acme, rival)]
    assert not any(token in line for token in tokens for line in lines)

"""Attack: a function with an egress allowlist tries to reach more than it lists.

A real test host runs in a network namespace made here (veth pair, addresses in
10.251.0.0/30); its HTTP server is the only allowed destination. Through the gateway,
the function can reach exactly that host and port; the cloud metadata address, loopback
services of the host and ports not listed are refused; a function without egress has no
way out at all.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.netns import netns_host
from tests.support import deploy

pytestmark = pytest.mark.integration

HOST_IP = "10.251.0.1"
TEST_HOST_IP = "10.251.0.2"
PORT = 18080

FETCH = {
    "handler.py": (
        "import urllib.request, urllib.error\n"
        "def handle(event, context):\n"
        "    url = event['query']['url']\n"
        "    try:\n"
        "        with urllib.request.urlopen(url, timeout=5) as r:\n"
        "            return {'status': r.status, 'body': r.read().decode()}\n"
        "    except urllib.error.HTTPError as e:\n"
        "        return {'status': e.code, 'body': e.read().decode()[:200]}\n"
        "    except Exception as e:\n"
        "        return {'error': type(e).__name__}\n"
    )
}


@pytest.fixture(scope="module")
def test_host() -> Iterator[str]:
    """An HTTP server on its own host (network namespace) at 10.251.0.2:18080."""
    command = [
        *(sys.executable, "-m", "http.server", str(PORT)),
        *("--bind", TEST_HOST_IP, "--directory", "/usr/share/doc"),
    ]
    with netns_host(HOST_IP, TEST_HOST_IP, PORT, command) as url:
        yield url


def _fetch(gateway: RunningGateway, function: str, url: str) -> dict[str, object]:
    response = httpx.get(f"{gateway.url}/fn/sless-acme/{function}", params={"url": url}, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def test_egress_reaches_only_what_the_allowlist_names(
    gateway: RunningGateway, test_host: str
) -> None:
    acme = gateway.tenant("acme")
    function = deploy(acme, "sless-acme", "fetcher", FETCH, {"egress": [f"10.251.0.0/30:{PORT}"]})
    assert function["status"]["phase"] == "Ready", function["status"]

    allowed = _fetch(gateway, "fetcher", test_host)
    assert allowed["status"] == 200

    # the same host on another port, and the metadata service: the proxy refuses
    for url in (f"http://{TEST_HOST_IP}:{PORT + 1}/", "http://169.254.169.254/latest/meta-data/"):
        refused = _fetch(gateway, "fetcher", url)
        assert refused.get("status") == 403, (url, refused)
    # loopback inside the sandbox is the sandbox's own: the gateway is not there
    assert "error" in _fetch(gateway, "fetcher", f"{gateway.url}/healthz")
    # and through the proxy explicitly, loopback is refused too
    proxied = _fetch(gateway, "fetcher", f"http://localhost.:{gateway.settings.gateway.port}/")
    assert proxied.get("status") == 403 or "error" in proxied


def test_no_egress_means_no_way_out(gateway: RunningGateway, test_host: str) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, "sless-acme", "isolated", FETCH)
    for url in (test_host, f"{gateway.url}/healthz", "http://127.0.0.1:3128/"):
        result = _fetch(gateway, "isolated", url)
        assert "error" in result, (url, result)

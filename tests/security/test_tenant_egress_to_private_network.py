"""Attack: a tenant writes an egress allowlist that names the provider's private network.

The allowlist is the tenant's own: nothing stops it from naming ``10.0.0.0/8:5432``, the
whole IPv4 space, a name that resolves into the provider's network, or the gateway
machine's own address (its PostgreSQL, RabbitMQ, S3 server or admin port on
``0.0.0.0``). The provider's rule (``sless.models.reach``) refuses private, shared and
reserved ranges unless the provider allows one (``SLESS_EGRESS_PRIVATE_ALLOWED``), and the
machine's own addresses always.

A real test host stands for a server of the provider's private network: a network
namespace made here at 10.251.41.2 (the veth's near end, 10.251.41.1, is an address of the
namespace the gateway runs in: "its own machine"). The handler attacks through its egress
proxy as any HTTP client does. The own address is only ever asked of the proxy, which
refuses it before any connection (nothing listens there, and the answer is the proxy's).
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Iterator

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.netns import netns_host
from tests.support import deploy

pytestmark = pytest.mark.integration

HOST_IP = "10.251.41.1"
TEST_HOST_IP = "10.251.41.2"
PORT = 18141
NS = "sless-acme"
#: what a provider allowing its tenants this test network configures
ALLOWS_THE_TEST_NETWORK = [ipaddress.ip_network("10.251.41.0/24")]

FETCH = {
    "handler.py": (
        "import urllib.request, urllib.error\n"
        "def handle(event, context):\n"
        "    url = event['query']['url']\n"
        "    try:\n"
        "        with urllib.request.urlopen(url, timeout=5) as r:\n"
        "            return {'status': r.status, 'body': r.read().decode()[:200]}\n"
        "    except urllib.error.HTTPError as e:\n"
        "        return {'status': e.code, 'body': e.read().decode()[:300]}\n"
        "    except Exception as e:\n"
        "        return {'error': type(e).__name__}\n"
    )
}


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The provider allows no private range, unless a test passes one (``indirect``)."""
    settings.egress.private_allowed = list(getattr(request, "param", []))
    return settings


@pytest.fixture(scope="module")
def test_host() -> Iterator[str]:
    """A server of "the provider's network": an HTTP server at 10.251.41.2:18141."""
    command = [
        *(sys.executable, "-m", "http.server", str(PORT)),
        *("--bind", TEST_HOST_IP, "--directory", "/usr/share/doc"),
    ]
    with netns_host(HOST_IP, TEST_HOST_IP, PORT, command) as url:
        yield url


def _fetch(gateway: RunningGateway, function: str, url: str) -> dict[str, object]:
    response = httpx.get(f"{gateway.url}/fn/{NS}/{function}", params={"url": url}, timeout=30)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result


def test_an_allowlist_naming_only_a_private_range_is_refused_when_put(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    for rule in (f"{TEST_HOST_IP}:{PORT}", "10.0.0.0/8:5432", "[fd12::1]:6379", "172.16.0.0/12:80"):
        response = acme.put(f"/v1/namespaces/{NS}/functions/f", json={"egress": [rule]})
        assert response.status_code == 422, (rule, response.text)
        message = response.text
        assert rule in message
        assert "SLESS_EGRESS_PRIVATE_ALLOWED" in message
    # the never-reachable classes are refused too, and no setting is offered for them
    response = acme.put(f"/v1/namespaces/{NS}/functions/f", json={"egress": ["127.0.0.1:5432"]})
    assert response.status_code == 422, response.text
    assert "never" in response.text
    # a rule that is partly public is taken: its private part is refused when used
    response = acme.put(f"/v1/namespaces/{NS}/functions/f", json={"egress": ["0.0.0.0/0:443"]})
    assert response.status_code in (200, 201), response.text


def test_a_handler_cannot_reach_a_private_address_the_provider_does_not_allow(
    gateway: RunningGateway, test_host: str
) -> None:
    acme = gateway.tenant("acme")
    # "the whole internet on this port" is a legitimate rule; it covers 10/8 as well
    deploy(acme, NS, "wide", FETCH, {"egress": [f"0.0.0.0/0:{PORT}"]})
    refused = _fetch(gateway, "wide", test_host)
    assert refused.get("status") == 403, refused
    assert "SLESS_EGRESS_PRIVATE_ALLOWED" in str(refused["body"]), refused
    # the same address spelled as a name (inet_aton's one-number form: resolved, not
    # parsed as an address), the way an attacker slips past a literal-address check
    as_name = int(ipaddress.ip_address(TEST_HOST_IP))
    refused = _fetch(gateway, "wide", f"http://{as_name}:{PORT}/")
    assert refused.get("status") == 403, refused
    body = str(refused["body"])
    assert "resolves to an address the provider refuses" in body, refused
    assert TEST_HOST_IP not in body  # what a name resolves to is not told


@pytest.mark.parametrize("settings", [ALLOWS_THE_TEST_NETWORK], indirect=True)
def test_a_private_range_the_provider_allows_is_reachable(
    gateway: RunningGateway, test_host: str
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "db-client", FETCH, {"egress": [f"10.251.41.0/30:{PORT}"]})
    reached = _fetch(gateway, "db-client", test_host)
    assert reached.get("status") == 200, reached
    # another private range stays refused, when put and when asked of the proxy
    response = acme.put(f"/v1/namespaces/{NS}/functions/g", json={"egress": ["10.0.0.0/16:80"]})
    assert response.status_code == 422, response.text


@pytest.mark.parametrize("settings", [ALLOWS_THE_TEST_NETWORK], indirect=True)
def test_the_gateway_machines_own_address_is_refused_even_inside_an_allowed_range(
    gateway: RunningGateway, test_host: str
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "prober", FETCH, {"egress": [f"10.251.41.0/30:{PORT}"]})
    # refused by the proxy before any connection: the answer is the proxy's own 403
    refused = _fetch(gateway, "prober", f"http://{HOST_IP}:{PORT}/")
    assert refused.get("status") == 403, refused
    assert "gateway's own machine" in str(refused["body"]), refused

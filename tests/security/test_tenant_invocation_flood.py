"""Attack: one tenant's functions are flooded (by it or by anyone, for public functions)
to starve the gateway. The owner's invocation bucket answers 429 with ``Retry-After``;
another tenant's functions are unaffected."""

from __future__ import annotations

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

BURST = 4
HELLO = {"handler.py": "def handle(event, context):\n    return 'hi'\n"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.invoke_burst = BURST
    settings.limits.invoke_rate_per_s = 0.2
    return settings


def test_invocation_flood_gets_429_and_another_tenant_does_not(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    beta = gateway.tenant("beta")
    deploy(acme, "sless-acme", "f", HELLO)
    deploy(beta, "sless-beta", "f", HELLO)
    url = f"{gateway.url}/fn/sless-acme/f"
    assert [httpx.get(url).status_code for _ in range(BURST)] == [200] * BURST
    refused = httpx.get(url)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "too_many_requests"
    assert int(refused.headers["retry-after"]) >= 1
    assert httpx.get(f"{gateway.url}/fn/sless-beta/f").status_code == 200

"""Attack: one tenant holds many slow invocations open to starve the gateway's workers.
Above its concurrency limit its calls get 429 with ``Retry-After``; another tenant's
functions are unaffected."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

HELLO = {"handler.py": "def handle(event, context):\n    return 'hi'\n"}
SLOW = {
    "handler.py": (
        "import time\n\ndef handle(event, context):\n    time.sleep(2)\n    return 'slow'\n"
    )
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.invoke_concurrency = 1
    return settings


def test_concurrent_invocations_above_the_limit_get_429(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    beta = gateway.tenant("beta")
    deploy(acme, "sless-acme", "slow", SLOW, {"timeout_s": 10})
    deploy(beta, "sless-beta", "f", HELLO)
    assert httpx.get(f"{gateway.url}/fn/sless-acme/slow", timeout=30).status_code == 200  # warm
    with ThreadPoolExecutor(max_workers=4) as pool:
        calls = [
            pool.submit(httpx.get, f"{gateway.url}/fn/sless-acme/slow", timeout=30)
            for _ in range(3)
        ]
        other = httpx.get(f"{gateway.url}/fn/sless-beta/f", timeout=30)
        responses = [c.result() for c in calls]
    assert sorted(r.status_code for r in responses) == [200, 429, 429]
    refused = [r for r in responses if r.status_code == 429]
    assert all(r.headers["retry-after"] == "1" for r in refused)
    assert all(r.json()["error"]["code"] == "too_many_requests" for r in refused)
    assert other.status_code == 200
    # the slot is released when the call ends
    assert httpx.get(f"{gateway.url}/fn/sless-acme/slow", timeout=30).status_code == 200

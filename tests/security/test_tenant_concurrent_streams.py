"""Attack: one tenant opens many long streams to hold the gateway and the workers.

A stream counts against its tenant's concurrency limit for as long as it lasts (not
only until its head), so past the limit its next calls get 429 while another tenant's
calls go on; a caller leaving gives the slot back at once.
"""

from __future__ import annotations

import contextlib

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, wait_for

pytestmark = pytest.mark.integration

ENDLESS = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    while True:\n"
        "        yield 'data: tick\\n\\n'\n"
        "        time.sleep(0.2)\n"
    )
}
HELLO = {"handler.py": "def handle(event, context):\n    return 'hi'\n"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.invoke_concurrency = 2
    return settings


def test_streams_hold_their_tenants_slots_until_they_end(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    beta = gateway.tenant("beta")
    deploy(acme, "sless-acme", "endless", ENDLESS, {"timeout_s": 300, "max_instances": 4})
    deploy(acme, "sless-acme", "hello", HELLO)
    deploy(beta, "sless-beta", "hello", HELLO)
    url = f"{gateway.url}/fn/sless-acme/endless"
    readers = []  # a line iterator dropped early would close its connection (httpcore)
    with contextlib.ExitStack() as streams:
        for _ in range(2):
            response = streams.enter_context(httpx.stream("GET", url, timeout=60))
            assert response.status_code == 200
            readers.append(response.iter_lines())
            assert next(readers[-1]) == "data: tick"
        # both slots are held by streams that have long sent their heads
        refused = httpx.get(f"{gateway.url}/fn/sless-acme/hello", timeout=60)
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "too_many_requests"
        assert httpx.get(url, timeout=60).status_code == 429
        # another tenant is not held back
        assert httpx.get(f"{gateway.url}/fn/sless-beta/hello", timeout=60).status_code == 200
        # the streams ran on meanwhile
        assert all(next(lines) == "" and next(lines) == "data: tick" for lines in readers)
    # the callers left: their slots come back
    wait_for(
        "the slots to come back",
        lambda: httpx.get(f"{gateway.url}/fn/sless-acme/hello", timeout=60).status_code == 200,
        timeout=60,
    )

"""Attack: guessing tokens from one address. After the allowed failed attempts per minute
the address gets 429 with ``Retry-After``, on the management API and on ``/fn``."""

from __future__ import annotations

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

ATTEMPTS = 5


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.failed_auth_per_minute = ATTEMPTS
    return settings


def _guess(i: int) -> dict[str, str]:
    return {"Authorization": f"Bearer sl_t_guess-{i:04d}" + "g" * 32}


def test_failed_authentication_attempts_are_limited_per_address(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    whoami = f"{gateway.url}/v1/whoami"
    statuses = [httpx.get(whoami, headers=_guess(i)).status_code for i in range(ATTEMPTS)]
    assert statuses == [401] * ATTEMPTS
    refused = httpx.get(whoami, headers=_guess(99))
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "too_many_requests"
    assert int(refused.headers["retry-after"]) >= 1
    # the address is held back before any token is checked, a valid one included
    assert acme.get("/v1/whoami").status_code == 429


def test_token_guessing_on_a_token_function_is_limited_too(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    code = {"handler.py": "def handle(event, context):\n    return 'secret'\n"}
    deploy(acme, "sless-acme", "f", code, {"auth": "token"})
    url = f"{gateway.url}/fn/sless-acme/f"
    statuses = [httpx.get(url, headers=_guess(i)).status_code for i in range(ATTEMPTS)]
    assert statuses == [401] * ATTEMPTS
    refused = httpx.get(url, headers=_guess(99))
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1

"""A gateway that starts on a database holding functions serves them from its first
request. Its backend sets up their pools in the background (a reconcile per function);
the start waits until each function that served before has its pool again, so a call
made as soon as the gateway listens, or a cron tick or queued call the restarted event
services fire at once, never gets 404 "not found" or 503 "not ready" for a function that
is Ready (the cause of a lost tick in tests/e2e/test_crash_exactly_once.py on a loaded CI
machine: the recovered tick fired before its function's pool existed).

Setting up a pool takes a few database round trips here, so the window is made wide on
purpose: each pool's set-up is delayed by ``DELAY_S`` in the restarted gateway."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from sless.backends.local.version_pools import VersionPools
from sless.config import Settings
from sless.gateway import create_app
from tests.conftest import ADMIN_TOKEN
from tests.support import deploy, start_in_thread

pytestmark = pytest.mark.integration

DELAY_S = 2.0
HANDLER = {"handler.py": "def handle(event, context):\n    return 'served'\n"}


def test_a_restarted_gateway_serves_its_functions_from_its_first_request(
    settings: Settings, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.admin.token = SecretStr(ADMIN_TOKEN)
    served = start_in_thread(create_app(settings, database_url), settings.gateway.port)
    try:
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
        ) as admin:
            token = admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as acme:
            for name in ("f", "g"):
                deploy(acme, "sless-acme", name, HANDLER)
        assert httpx.get(f"{served.url}/fn/sless-acme/f", timeout=30).json() == "served"
    finally:
        served.stop()

    original = VersionPools._configure_pool

    async def slow_configure(self: Any, key: Any, record: Any) -> None:
        await asyncio.sleep(DELAY_S)
        await original(self, key, record)

    monkeypatch.setattr(VersionPools, "_configure_pool", slow_configure)
    restarted = start_in_thread(
        create_app(settings, database_url), settings.gateway.port, start_timeout_s=60
    )
    try:
        # at once: no wait for anything but the gateway's own start
        answers = [httpx.get(f"{restarted.url}/fn/sless-acme/{n}", timeout=30) for n in "fg"]
        assert [(a.status_code, a.text) for a in answers] == [(200, '"served"')] * 2
    finally:
        restarted.stop()

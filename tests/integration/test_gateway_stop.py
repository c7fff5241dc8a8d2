"""What a gateway's stop leaves behind: nothing. A new version replaces a pool, and the old
pool drains in the background (its calls finish, its workers get SIGTERM, then SIGKILL
after the grace); a stop that comes meanwhile waits for that drain too, so no worker of
the old version outlives the gateway."""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from sless.gateway import create_app
from tests.conftest import ADMIN_TOKEN
from tests.support import deploy, start_in_thread, wait_for

pytestmark = pytest.mark.integration

SLOW = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    time.sleep(float(event['query'].get('s', '0')))\n"
        "    return 'v1'\n"
    )
}
NEXT = {"handler.py": "def handle(event, context):\n    return 'v2'\n"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has ended: only its parent's wait is missing
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_stop_waits_for_the_pools_that_drain(settings: Settings, database_url: str) -> None:
    settings.admin.token = SecretStr(ADMIN_TOKEN)
    settings.gateway.shutdown_grace_s = 10.0  # more than uvicorn's wait for open requests
    app = create_app(settings, database_url)
    served = start_in_thread(app, settings.gateway.port)
    calls = ThreadPoolExecutor(1)
    try:
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
        ) as admin:
            token = admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
        with httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        ) as acme:
            deploy(acme, "sless-acme", "f", SLOW)
            backend = app.api.state.platform.backend  # type: ignore[attr-defined]
            assert httpx.get(f"{served.url}/fn/sless-acme/f", timeout=30).json() == "v1"
            old = backend.pool("sless-acme", "f").worker_pids()
            assert old
            # a call the old version still serves when the new one takes over: the old
            # pool drains until it ends or the grace is over
            calls.submit(_call, f"{served.url}/fn/sless-acme/f?s=60")
            wait_for("the slow call in flight", lambda: backend.pool("sless-acme", "f").inflight)
            deploy(acme, "sless-acme", "f", NEXT)
        assert httpx.get(f"{served.url}/fn/sless-acme/f", timeout=30).json() == "v2"
        assert any(_alive(pid) for pid in old), "the old version stopped before its call ended"
    finally:
        served.stop()
        calls.shutdown()
    assert not served.thread.is_alive()
    left = [pid for pid in old if _alive(pid)]
    assert not left, f"workers of the old version outlived the gateway's stop: {left}"


def _call(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the stop ends it
        httpx.get(url, timeout=90)

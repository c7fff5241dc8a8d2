"""Attacks: a tenant holds WebSocket sessions to keep workers (and the gateway) busy.

- Sessions past the tenant's concurrency limit: a session counts as a running
  invocation for as long as it lasts, so the one past the limit is refused, and the slot
  comes back when a session ends.
- A handler that ignores the end of its session (never reads, never sends) to keep its
  worker's slot after the gateway closed: at the session's time limit (the function's
  ``timeout_s``) the worker is stopped, and the next session gets a fresh one.
- A handler that sends a message over the limit to fill the gateway's memory: the
  gateway never reads past the bound and closes the session with 1009.
"""

from __future__ import annotations

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from sless.config import Settings
from sless.gateway.websocket import MAX_MESSAGE_BYTES
from tests.conftest import RunningGateway
from tests.support import deploy, wait_for

pytestmark = pytest.mark.integration

NS = "sless-acme"
ECHO = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    while (message := await ws.receive()) is not None:\n"
        "        await ws.send(message)\n"
    )
}
#: says hello, then never looks at its session again
STUBBORN = {
    "handler.py": (
        "import asyncio\n"
        "async def handle(event, context):\n"
        "    await context.websocket.send('hello')\n"
        "    while True:\n"
        "        await asyncio.sleep(0.1)\n"
    )
}
FLOOD = {
    "handler.py": (
        "async def handle(event, context):\n"
        f"    await context.websocket.send(b'x' * {MAX_MESSAGE_BYTES + 1})\n"
        "    await context.websocket.receive()\n"
    )
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.invoke_concurrency = 1
    return settings


def _url(gateway: RunningGateway, name: str) -> str:
    return gateway.url.replace("http://", "ws://") + f"/fn/{NS}/{name}"


def test_sessions_past_the_tenant_concurrency_limit_are_refused(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "echo", ECHO, {"websocket": True, "timeout_s": 60})
    with connect(_url(gateway, "echo"), open_timeout=60) as held:
        held.send("mine")
        assert held.recv(timeout=60) == "mine"
        with pytest.raises(InvalidStatus) as refused:
            connect(_url(gateway, "echo"), open_timeout=60)
        assert refused.value.response.status_code == 429
        # an HTTP call of the tenant is refused the same way while the session runs
        assert httpx.get(f"{gateway.url}/fn/{NS}/echo", timeout=60).status_code == 429

    # the slot comes back when the session ends (the server answers a caller's close
    # before the gateway hears of it: a moment later)
    def reconnected() -> ClientConnection | None:
        try:
            return connect(_url(gateway, "echo"), open_timeout=60)
        except InvalidStatus as e:
            if e.response.status_code != 429:
                raise
            return None

    with wait_for("the slot to come back", reconnected, timeout=30) as again:
        again.send("back")
        assert again.recv(timeout=60) == "back"


def test_a_handler_that_ignores_the_end_of_its_session_loses_its_worker(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    spec = {"websocket": True, "timeout_s": 3, "concurrency": 1, "max_instances": 1}
    deploy(acme, NS, "stubborn", STUBBORN, spec)
    for _ in range(2):  # the second needs the one worker slot the first one held
        with connect(_url(gateway, "stubborn"), open_timeout=60) as ws:
            assert ws.recv(timeout=60) == "hello"
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=60)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1001


def test_a_handler_sending_an_oversized_message_is_closed_with_1009(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "flood", FLOOD, {"websocket": True, "timeout_s": 60})
    with (
        connect(_url(gateway, "flood"), open_timeout=60, max_size=None) as ws,
        pytest.raises(ConnectionClosed) as closed,
    ):
        ws.recv(timeout=60)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009

"""A WebSocket session through ``sless up`` as it serves (behind the admission wrapper),
with each server a deployment runs (``express``, the default, and granian): echo both
ways, a function without ``websocket: true`` refused, an oversized message closed with
1009. The integration tests run the app under uvicorn in-process.
"""

from __future__ import annotations

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from sless.gateway.websocket import MAX_MESSAGE_BYTES
from tests.conftest import ADMIN_TOKEN
from tests.e2e.test_streaming_served import served
from tests.security.test_websocket_malformed_frames import BAD_FRAMES, close_code, upgrade
from tests.support import deploy

__all__ = ["served"]

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ECHO = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    while (message := await ws.receive()) is not None:\n"
        "        await ws.send(message)\n"
    )
}


def test_a_websocket_session_through_sless_up(served: tuple[str, str]) -> None:
    http, url = served
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    ) as admin:
        token = admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as acme:
        deploy(acme, "sless-acme", "echo", ECHO, {"websocket": True, "timeout_s": 60})
        deploy(acme, "sless-acme", "plain", ECHO, {"timeout_s": 60})
    base = url.replace("http://", "ws://") + "/fn/sless-acme/"
    with connect(base + "echo", open_timeout=60, max_size=None) as ws:
        ws.send(f"over {http}")
        assert ws.recv(timeout=60) == f"over {http}"
        ws.send(b"x" * (MAX_MESSAGE_BYTES + 1))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009
    with pytest.raises(InvalidStatus) as refused:
        connect(base + "plain", open_timeout=60)
    assert refused.value.response.status_code == 403
    # frames that break RFC 6455, sent raw: the server ends the session and lives on
    port = int(url.rsplit(":", 1)[1])
    for frame in BAD_FRAMES.values():
        with upgrade(port) as sock:
            sock.sendall(frame)
            codes = close_code(sock)
        assert codes in (1002, 1005, 1009, None), codes
    with connect(base + "echo", open_timeout=60) as ws:
        ws.send("still works")
        assert ws.recv(timeout=60) == "still works"

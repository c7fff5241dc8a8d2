"""WebSocket sessions end to end: real gateway (uvicorn), real sandboxed Python workers.

``/fn/...`` takes an upgrade only for a function whose spec says ``websocket: true``,
with the same authentication as an HTTP call; messages are relayed both ways as they
come; an oversized message ends the session with 1009 and an idle one with 1001; the
session's lease (the worker's slot) comes back when it ends; the record holds it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

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
        "    if ws is None:\n"
        "        return 'plain http'\n"
        "    await ws.send('hello ' + event['path'])\n"
        "    while (message := await ws.receive()) is not None:\n"
        "        await ws.send(message)\n"
    )
}
ECHO_NODE = {
    "handler.js": (
        "exports.handle = async (event, context) => {\n"
        "  const ws = context.websocket;\n"
        "  if (ws === null) return 'plain http';\n"
        "  await ws.send('hello ' + event.path);\n"
        "  for (let m = await ws.receive(); m !== null; m = await ws.receive()) {\n"
        "    await ws.send(m);\n"
        "  }\n"
        "};\n"
    )
}
#: says nothing and waits: only the idle limit ends its session
SILENT = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    while await context.websocket.receive() is not None:\n"
        "        pass\n"
    )
}
#: answers each message twice, and says nothing first
TWICE = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    while (message := await ws.receive()) is not None:\n"
        "        await ws.send(message)\n"
        "        await ws.send(message)\n"
    )
}
SYNC = {"handler.py": "def handle(event, context):\n    return 'sync'\n"}
FAILING = {
    "handler.py": (
        "async def handle(event, context):\n"
        "    await context.websocket.receive()\n"
        "    raise RuntimeError('boom')\n"
    )
}
FAILING_NODE = {
    "handler.js": (
        "exports.handle = async (event, context) => {\n"
        "  await context.websocket.receive();\n"
        "  throw new Error('boom');\n"
        "};\n"
    )
}
IDLE_S = 2.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.gateway.stream_idle_timeout_s = IDLE_S
    return settings


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def _ws_url(gateway: RunningGateway, name: str, path: str = "") -> str:
    return gateway.url.replace("http://", "ws://") + f"/fn/{NS}/{name}{path}"


def _record(client: httpx.Client, name: str, invocation_id: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        rows = client.get(f"/v1/namespaces/{NS}/invocations", params={"function": name})
        return next((r for r in rows.json()["invocations"] if r["id"] == invocation_id), None)

    record: dict[str, Any] = wait_for("the invocation record", found, timeout=30)
    return record


@pytest.mark.parametrize(
    ("files", "runtime"), [(ECHO, "python3.11"), (ECHO_NODE, "nodejs20")], ids=["python", "node"]
)
def test_echo_both_ways_and_the_record(
    gateway: RunningGateway, acme: httpx.Client, files: dict[str, str], runtime: str
) -> None:
    deploy(acme, NS, "echo", files, {"websocket": True, "timeout_s": 60, "runtime": runtime})
    with connect(_ws_url(gateway, "echo", "/room/1"), open_timeout=60) as ws:
        invocation_id = ws.response.headers["x-sless-invocation-id"]
        assert ws.recv(timeout=60) == "hello /room/1"
        ws.send("text message")
        assert ws.recv(timeout=60) == "text message"
        ws.send(b"\x00\x01binary")
        assert ws.recv(timeout=60) == b"\x00\x01binary"
    record = _record(acme, "echo", invocation_id)
    assert record["status"] == 101
    assert record["request_bytes"] == len("text message") + 8
    assert record["response_bytes"] == len("hello /room/1") + len("text message") + 8
    # the messages each way: two from the caller, three from the function
    assert (record["request_messages"], record["response_messages"]) == (2, 3)
    # the same function still answers plain HTTP calls; their records count no messages
    plain = httpx.get(f"{gateway.url}/fn/{NS}/echo", timeout=60)
    assert plain.json() == "plain http"
    record = _record(acme, "echo", plain.headers["x-sless-invocation-id"])
    assert (record["request_messages"], record["response_messages"]) == (None, None)


def test_the_record_counts_the_messages_each_way(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    """N messages sent, M = 2N received: the stored record says N and M."""
    deploy(acme, NS, "twice", TWICE, {"websocket": True, "timeout_s": 60})
    sent = 7
    with connect(_ws_url(gateway, "twice"), open_timeout=60) as ws:
        invocation_id = ws.response.headers["x-sless-invocation-id"]
        for i in range(sent):
            ws.send(f"m{i}" if i % 2 else f"m{i}".encode())
            assert ws.recv(timeout=60) == ws.recv(timeout=60)
    record = _record(acme, "twice", invocation_id)
    assert (record["request_messages"], record["response_messages"]) == (sent, 2 * sent)
    assert record["request_bytes"] == sum(len(f"m{i}") for i in range(sent))
    assert record["response_bytes"] == 2 * record["request_bytes"]


def test_a_function_without_websocket_true_refuses_the_upgrade(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "plain", ECHO, {"timeout_s": 60})
    with pytest.raises(InvalidStatus) as refused:
        connect(_ws_url(gateway, "plain"), open_timeout=60)
    assert refused.value.response.status_code == 403
    assert httpx.get(f"{gateway.url}/fn/{NS}/plain", timeout=60).json() == "plain http"


def test_an_auth_token_function_refuses_an_anonymous_upgrade(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "private", ECHO, {"websocket": True, "auth": "token"})
    with pytest.raises(InvalidStatus) as anonymous:
        connect(_ws_url(gateway, "private"), open_timeout=60)
    assert anonymous.value.response.status_code == 401
    with pytest.raises(InvalidStatus) as forged:
        connect(
            _ws_url(gateway, "private"),
            open_timeout=60,
            additional_headers={"Authorization": "Bearer sl_t_not-a-real-token"},
        )
    assert forged.value.response.status_code == 401
    token = acme.headers["authorization"]
    with connect(
        _ws_url(gateway, "private"), open_timeout=60, additional_headers={"Authorization": token}
    ) as ws:
        assert ws.recv(timeout=60) == "hello /"


def test_an_oversized_message_closes_the_session_with_1009(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "echo", ECHO, {"websocket": True, "timeout_s": 60})
    with connect(_ws_url(gateway, "echo"), open_timeout=60, max_size=None) as ws:
        assert ws.recv(timeout=60) == "hello /"
        ws.send(b"x" * (MAX_MESSAGE_BYTES + 1))
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1009
    invocation_id = ws.response.headers["x-sless-invocation-id"]
    record = _record(acme, "echo", invocation_id)
    assert record["error"] == "message_too_large"
    # the oversized message was not relayed: only the function's greeting counts
    assert (record["request_messages"], record["response_messages"]) == (0, 1)


def test_the_idle_limit_closes_the_session(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "silent", SILENT, {"websocket": True, "timeout_s": 120})
    with connect(_ws_url(gateway, "silent"), open_timeout=60) as ws:
        for _ in range(3):
            ws.send("unanswered")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)  # nothing comes: the gateway ends it after IDLE_S
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1001
    invocation_id = ws.response.headers["x-sless-invocation-id"]
    record = _record(acme, "silent", invocation_id)
    assert record["error"] == "idle"
    # a session a limit ended still counts what went through
    assert (record["request_messages"], record["response_messages"]) == (3, 0)


def test_the_slot_comes_back_after_the_session(gateway: RunningGateway, acme: httpx.Client) -> None:
    # one worker serving one call at a time: a session that kept its lease would
    # leave the next session (and any call) waiting, then refused
    spec = {"websocket": True, "concurrency": 1, "max_instances": 1, "timeout_s": 60}
    deploy(acme, NS, "single", ECHO, spec)
    for i in range(3):
        with connect(_ws_url(gateway, "single"), open_timeout=60) as ws:
            assert ws.recv(timeout=60) == "hello /"
            ws.send(f"session {i}")
            assert ws.recv(timeout=60) == f"session {i}"
    assert httpx.get(f"{gateway.url}/fn/{NS}/single", timeout=60).json() == "plain http"


def test_a_sync_handler_refuses_the_upgrade(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "sync", SYNC, {"websocket": True})
    with pytest.raises(InvalidStatus) as refused:
        connect(_ws_url(gateway, "sync"), open_timeout=60)
    assert refused.value.response.status_code == 403
    assert refused.value.response.body is not None
    assert b"websocket_not_allowed" in refused.value.response.body


@pytest.mark.parametrize(
    ("files", "runtime"),
    [(FAILING, "python3.11"), (FAILING_NODE, "nodejs20")],
    ids=["python", "node"],
)
def test_a_handler_that_raises_closes_with_1011(
    gateway: RunningGateway, acme: httpx.Client, files: dict[str, str], runtime: str
) -> None:
    deploy(acme, NS, "failing", files, {"websocket": True, "timeout_s": 60, "runtime": runtime})
    with connect(_ws_url(gateway, "failing"), open_timeout=60) as ws:
        ws.send("go")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=60)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 1011


@pytest.mark.parametrize("path", ["/v1/namespaces", "/healthz", "/console/", "/nowhere"])
def test_an_upgrade_outside_fn_is_refused(gateway: RunningGateway, path: str) -> None:
    url = gateway.url.replace("http://", "ws://") + path
    with pytest.raises(InvalidStatus) as refused:
        connect(url, open_timeout=60)
    assert refused.value.response.status_code == 403
    assert httpx.get(f"{gateway.url}/healthz", timeout=60).status_code == 200


#: talks without pause until the caller leaves
CHATTY = {
    "handler.py": (
        "import asyncio\n"
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    async def talk():\n"
        "        while True:\n"
        "            await ws.send('tick')\n"
        "            await asyncio.sleep(0)\n"
        "    talking = asyncio.ensure_future(talk())\n"
        "    while await ws.receive() is not None:\n"
        "        pass\n"
        "    talking.cancel()\n"
    )
}


def test_a_caller_leaving_while_the_function_talks_ends_the_session_cleanly(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    """The caller closes while the gateway is relaying the function's messages to it: the
    session ended as the caller wished (101 in the record, no error), however the two
    sides' ends interleave, and the worker's slot comes back."""
    deploy(acme, NS, "chatty", CHATTY, {"websocket": True, "timeout_s": 60})
    ids = []
    for _ in range(8):
        with connect(_ws_url(gateway, "chatty"), open_timeout=60) as ws:
            ids.append(ws.response.headers["x-sless-invocation-id"])
            assert ws.recv(timeout=60) == "tick"
    for invocation_id in ids:
        record = _record(acme, "chatty", invocation_id)
        assert (record["status"], record["error"]) == (101, None), record
    pool = gateway.app.api.state.platform.backend.pool(NS, "chatty")  # type: ignore[attr-defined]
    wait_for("the slot back", lambda: pool.inflight == 0)

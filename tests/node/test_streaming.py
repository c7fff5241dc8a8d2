"""Streamed answers and WebSocket sessions on the real node, through the gateway to a pod
under gVisor, in Python and in Node.

A server-sent-events answer reaches the caller chunk by chunk: the handler sends its first
event, then waits until the test releases it (a second call to the same pod) before it
sends its last one, so the caller can only have the first event if the gateway relayed it
while the handler was still running. A buffering gateway would hold it until the handler
gave up, and the last event would then say so. A function with ``websocket: true`` runs an
echo session with the pod; one without refuses the upgrade. The session's invocation
record counts its messages and bytes each way. The pod's handler gets the gateway's
trace context, in the caller's trace.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from sless.backends import parse_traceparent
from sless.config import Settings
from tests.node.stack import Gateway, onboard
from tests.node.support import wait_for
from tests.support import make_zip

#: the handlers wait this long for the release, then end the stream saying they were not
RELEASE_WAIT_S = 90

PYTHON = {
    "handler.py": (
        "import asyncio, threading\n"
        "released = threading.Event()\n"
        "last = {'ended': None}  # how the last stream ended\n"
        "async def handle(event, context):\n"
        "    ws = context.websocket\n"
        "    if ws is not None:\n"
        "        await ws.send('hello ' + event['path'])\n"
        "        while (message := await ws.receive()) is not None:\n"
        "            await ws.send(message)\n"
        "        return None\n"
        "    if 'release' in event['query']:\n"
        "        released.set()\n"
        "        return 'released'\n"
        "    if 'ping' in event['query']:\n"
        "        return 'pong'\n"
        "    if 'ended' in event['query']:\n"
        "        return last['ended']\n"
        "    if 'trace' in event['query']:\n"
        "        h = event['headers']\n"
        "        return {'trace_id': context.trace_id, 'header': h.get('traceparent'),\n"
        "                'tracestate': h.get('tracestate')}\n"
        "    released.clear()\n"
        "    last['ended'] = None\n"
        "    async def events():\n"
        "        yield 'data: first\\n\\n'\n"
        "        try:\n"
        f"            ok = await asyncio.to_thread(released.wait, {RELEASE_WAIT_S})\n"
        "        except asyncio.CancelledError:\n"
        "            last['ended'] = 'stopped'\n"
        "            raise\n"
        "        last['ended'] = 'released'\n"
        "        yield 'data: last\\n\\n' if ok else 'data: never released\\n\\n'\n"
        "    return {'statusCode': 200, 'headers': {'content-type': 'text/event-stream'},\n"
        "            'body': events()}\n"
    )
}
NODE = {
    "handler.js": (
        "let release = null;\n"
        "let ended = null;  // how the last stream ended\n"
        "exports.handle = async (event, context) => {\n"
        "  const ws = context.websocket;\n"
        "  if (ws !== null) {\n"
        "    await ws.send('hello ' + event.path);\n"
        "    for (let m = await ws.receive(); m !== null; m = await ws.receive()) {\n"
        "      await ws.send(m);\n"
        "    }\n"
        "    return;\n"
        "  }\n"
        "  if ('release' in event.query) { if (release) release(true); return 'released'; }\n"
        "  if ('ping' in event.query) return 'pong';\n"
        "  if ('ended' in event.query) return ended;\n"
        "  if ('trace' in event.query) {\n"
        "    return { trace_id: context.trace_id, header: event.headers.traceparent || null,\n"
        "      tracestate: event.headers.tracestate || null };\n"
        "  }\n"
        "  ended = null;\n"
        "  const released = new Promise((resolve) => {\n"
        "    release = resolve;\n"
        "    context.signal.addEventListener('abort', () => {\n"
        "      ended = 'stopped';\n"
        "      resolve(false);\n"
        "    });\n"
        f"    setTimeout(() => resolve(false), {RELEASE_WAIT_S * 1000});\n"
        "  });\n"
        "  context.status = 200;\n"
        "  context.headers = { 'content-type': 'text/event-stream' };\n"
        "  await context.write('data: first\\n\\n');\n"
        "  const ok = await released;\n"
        "  if (ok) ended = 'released';\n"
        "  await context.write(ok ? 'data: last\\n\\n' : 'data: never released\\n\\n');\n"
        "};\n"
    )
}
#: name -> (runtime, code, spec); one instance at most, so the release call reaches the
#: pod whose handler waits for it
FUNCTIONS: dict[str, tuple[str, dict[str, str], dict[str, Any]]] = {
    "pystream": ("python3.11", PYTHON, {"websocket": True}),
    "jsstream": ("nodejs20", NODE, {"websocket": True}),
    "plain": ("python3.11", PYTHON, {}),
}

# the first builds pull and unpack images on 2 shared cores: minutes, three at once
pytestmark = pytest.mark.timeout(1200)


@pytest.fixture(scope="module")
def tenant(stack: tuple[Gateway, Settings]) -> Iterator[tuple[Gateway, httpx.Client, str]]:
    """A tenant with the three functions built and Ready (the builds run side by side)."""
    gateway, _ = stack
    name = "strm" + uuid.uuid4().hex[:6]
    ns = f"sless-{name}"
    with onboard(gateway, name) as client:
        try:
            wait_for("the tenant namespace", lambda: client.get("/v1/whoami").status_code == 200)
            for fn, (runtime, files, spec) in FUNCTIONS.items():
                path = f"/v1/namespaces/{ns}/functions/{fn}"
                body = {"runtime": runtime, "max_instances": 1, "timeout_s": 180, **spec}

                # 503 until the operator has made the tenant's namespace in the cluster
                def put(path: str = path, body: dict[str, Any] = body) -> httpx.Response | None:
                    return _accepted(client.put(path, json=body))

                created = wait_for(f"{fn} accepted", put, timeout_s=120)
                assert created.status_code in (200, 201), created.text
                uploaded = client.post(
                    path + "/upload",
                    content=make_zip(dict(files)),
                    headers={"Content-Type": "application/zip"},
                )
                assert uploaded.status_code == 202, uploaded.text
            for fn in FUNCTIONS:

                def ready(fn: str = fn) -> bool:
                    return _ready(client, ns, fn)

                wait_for(f"{fn} Ready", ready, timeout_s=900, every_s=2)
            yield gateway, client, ns
        finally:
            # the node has 2 CPUs: leave them to the next module
            for fn in FUNCTIONS:
                client.delete(f"/v1/namespaces/{ns}/functions/{fn}")


def _accepted(answer: httpx.Response) -> httpx.Response | None:
    return None if answer.status_code == 503 else answer


def _ready(client: httpx.Client, ns: str, name: str) -> bool:
    status = client.get(f"/v1/namespaces/{ns}/functions/{name}").json().get("status") or {}
    assert status.get("phase") not in ("Failed", "Rejected"), status
    return status.get("phase") == "Ready"


def _ping(gateway: Gateway, ns: str, name: str) -> bool:
    """The pod answers (a 503 while it starts; a function scaled to zero is woken)."""
    answer = httpx.get(f"{gateway.url}/fn/{ns}/{name}", params={"ping": "1"}, timeout=300)
    if answer.status_code == 503:
        return False
    assert answer.status_code == 200, answer.text
    assert answer.json() == "pong"
    return True


def _record(client: httpx.Client, ns: str, name: str, invocation_id: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        rows = client.get(f"/v1/namespaces/{ns}/invocations", params={"function": name})
        assert rows.status_code == 200, rows.text
        return next((r for r in rows.json()["invocations"] if r["id"] == invocation_id), None)

    record: dict[str, Any] = wait_for(f"{name}'s invocation record", found, timeout_s=60)
    return record


@pytest.mark.parametrize("name", ["pystream", "jsstream"])
def test_server_sent_events_come_from_the_pod_chunk_by_chunk(
    tenant: tuple[Gateway, httpx.Client, str], name: str
) -> None:
    gateway, client, ns = tenant
    wait_for(f"{name}'s pod", lambda: _ping(gateway, ns, name), every_s=1)
    with httpx.stream("GET", f"{gateway.url}/fn/{ns}/{name}", timeout=300) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert "content-length" not in response.headers
        assert response.headers["transfer-encoding"] == "chunked"
        invocation_id = response.headers["x-sless-invocation-id"]
        lines = response.iter_lines()
        # the handler holds its last event until the release below: this line can only
        # be here now if the gateway passed it on while the handler ran
        assert next(lines) == "data: first"
        assert next(lines) == ""
        released = httpx.get(f"{gateway.url}/fn/{ns}/{name}", params={"release": "1"}, timeout=60)
        assert released.status_code == 200, released.text
        assert released.json() == "released"
        assert list(lines) == ["data: last", ""]
    record = _record(client, ns, name, invocation_id)
    assert record["status"] == 200, record
    assert record["response_bytes"] == len(b"data: first\n\ndata: last\n\n"), record
    assert (record["request_messages"], record["response_messages"]) == (None, None), record


@pytest.mark.parametrize("name", ["pystream", "jsstream"])
def test_a_websocket_session_with_the_pod_echoes_and_is_recorded(
    tenant: tuple[Gateway, httpx.Client, str], name: str
) -> None:
    gateway, client, ns = tenant
    wait_for(f"{name}'s pod", lambda: _ping(gateway, ns, name), every_s=1)
    url = gateway.url.replace("http://", "ws://") + f"/fn/{ns}/{name}/room/1"
    with connect(url, open_timeout=300) as ws:
        assert ws.response is not None
        invocation_id = ws.response.headers["x-sless-invocation-id"]
        assert ws.recv(timeout=60) == "hello /room/1"
        ws.send("text message")
        assert ws.recv(timeout=60) == "text message"
        ws.send(b"\x00\x01binary")
        assert ws.recv(timeout=60) == b"\x00\x01binary"
    record = _record(client, ns, name, invocation_id)
    assert record["status"] == 101, record
    # two messages from the caller, three from the function; their payload bytes
    assert (record["request_messages"], record["response_messages"]) == (2, 3), record
    assert record["request_bytes"] == len("text message") + len(b"\x00\x01binary"), record
    assert record["response_bytes"] == (
        len("hello /room/1") + len("text message") + len(b"\x00\x01binary")
    ), record


@pytest.mark.parametrize("name", ["pystream", "jsstream"])
def test_a_caller_leaving_mid_stream_stops_the_handler_in_the_pod(
    tenant: tuple[Gateway, httpx.Client, str], name: str
) -> None:
    gateway, client, ns = tenant
    wait_for(f"{name}'s pod", lambda: _ping(gateway, ns, name), every_s=1)
    with httpx.stream("GET", f"{gateway.url}/fn/{ns}/{name}", timeout=300) as response:
        assert response.status_code == 200
        invocation_id = response.headers["x-sless-invocation-id"]
        assert next(response.iter_lines()) == "data: first"
    # the caller has gone while the handler waited: the gateway closed its connection to
    # the pod, and the runtime stopped the handler (asked through the same pod)

    def ended() -> str | None:
        answer = httpx.get(f"{gateway.url}/fn/{ns}/{name}", params={"ended": "1"}, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]

    assert wait_for(f"{name}'s handler stopped", ended, timeout_s=60) == "stopped"
    record = _record(client, ns, name, invocation_id)
    assert record["error"] == "client_disconnected", record
    assert record["response_bytes"] == len(b"data: first\n\n"), record


CALLER_TRACE, CALLER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"


@pytest.mark.parametrize("name", ["pystream", "jsstream"])
def test_the_pod_gets_the_gateways_trace_context_in_the_callers_trace(
    tenant: tuple[Gateway, httpx.Client, str], name: str
) -> None:
    gateway, _, ns = tenant
    wait_for(f"{name}'s pod", lambda: _ping(gateway, ns, name), every_s=1)
    answer = httpx.get(
        f"{gateway.url}/fn/{ns}/{name}",
        params={"trace": "1"},
        headers={
            "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
            "tracestate": "vendor=secret",
        },
        timeout=120,
    )
    assert answer.status_code == 200, answer.text
    seen = answer.json()
    parsed = parse_traceparent(seen["header"] or "")
    assert parsed is not None, seen
    # the caller's trace goes on, under the gateway's span; the caller's state stays out
    assert parsed[0] == seen["trace_id"] == CALLER_TRACE
    assert parsed[1] != CALLER_SPAN
    assert seen["tracestate"] is None


def test_a_function_without_websocket_true_refuses_the_upgrade(
    tenant: tuple[Gateway, httpx.Client, str],
) -> None:
    gateway, _, ns = tenant
    wait_for("plain's pod", lambda: _ping(gateway, ns, "plain"), every_s=1)
    url = gateway.url.replace("http://", "ws://") + f"/fn/{ns}/plain"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, open_timeout=60)
    assert refused.value.response.status_code == 403
    assert b"websocket_not_allowed" in (refused.value.response.body or b"")

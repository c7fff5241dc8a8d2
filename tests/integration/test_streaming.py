"""Streamed answers end to end: real gateway, real sandboxed workers of both runtimes.

A handler that streams (a generator, an async generator, a response whose body is an
iterator; in Node an async iterator or ``context.write``) reaches the caller chunk by
chunk through ``/fn/...``; the record is written when the stream ends, with the bytes
sent; a caller that leaves stops the handler; a slow caller holds the handler back
instead of filling anyone's memory.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, wait_for

pytestmark = pytest.mark.integration

NS = "sless-acme"

SSE = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    def events():\n"
        "        yield 'data: first\\n\\n'\n"
        "        # never ends by itself: only a gateway that relays as it comes\n"
        "        # lets the caller see the first event\n"
        "        while True:\n"
        "            time.sleep(0.2)\n"
        "            yield ': keep-alive\\n\\n'\n"
        "    return {'statusCode': 200, 'headers': {'content-type': 'text/event-stream'},\n"
        "            'body': events()}\n"
    )
}

FINITE = {
    "handler.py": (
        "import asyncio\n"
        "async def handle(event, context):\n"
        "    for i in range(5):\n"
        "        yield {'i': i, 'pad': 'x' * 1000}\n"
        "        await asyncio.sleep(0.1)\n"
    )
}

#: prints each tick and, when stopped, "stopped": the log shows whether it ran on
TICKS_SYNC = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    try:\n"
        "        for i in range(100000):\n"
        "            print('tick', i, flush=True)\n"
        "            yield f'tick {i}\\n'\n"
        "            time.sleep(0.05)\n"
        "    finally:\n"
        "        print('stopped', flush=True)\n"
    )
}
TICKS_ASYNC = {
    "handler.py": (
        "import asyncio\n"
        "async def gen():\n"
        "    try:\n"
        "        for i in range(100000):\n"
        "            print('tick', i, flush=True)\n"
        "            yield f'tick {i}\\n'\n"
        "            await asyncio.sleep(0.05)\n"
        "    finally:\n"
        "        print('stopped', flush=True)\n"
        "def handle(event, context):\n"
        "    return gen()\n"
    )
}
TICKS_NODE = {
    "handler.js": (
        "exports.handle = async (event, context) => {\n"
        "  async function* ticks() {\n"
        "    try {\n"
        "      for (let i = 0; i < 100000; i++) {\n"
        "        console.log('tick', i);\n"
        "        yield `tick ${i}\\n`;\n"
        "        await new Promise((r) => setTimeout(r, 50));\n"
        "      }\n"
        "    } finally { console.log('stopped'); }\n"
        "  }\n"
        "  return ticks();\n"
        "};\n"
    )
}
WRITE_NODE = {
    "handler.js": (
        "exports.handle = async (event, context) => {\n"
        "  context.headers = {'content-type': 'text/event-stream'};\n"
        "  try {\n"
        "    for (let i = 0; i < 100000; i++) {\n"
        "      console.log('tick', i);\n"
        "      await context.write(`data: ${i}\\n\\n`);\n"
        "      await new Promise((r) => setTimeout(r, 50));\n"
        "    }\n"
        "  } finally { console.log('stopped'); }\n"
        "};\n"
    )
}

CHUNK = 64 * 1024
TOTAL_CHUNKS = 4096  # 256 MiB if nothing held it back
#: reports how much it has produced every MiB
FIREHOSE = {
    "handler.py": (
        f"CHUNK = b'z' * {CHUNK}\n"
        "def handle(event, context):\n"
        f"    for i in range({TOTAL_CHUNKS}):\n"
        "        if i % 16 == 0:\n"
        "            print('produced', i * len(CHUNK), flush=True)\n"
        "        yield CHUNK\n"
        "    print('produced', " + f"{TOTAL_CHUNKS} * len(CHUNK), flush=True)\n"
    )
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.gateway.max_response_bytes = 1024 * 1024 * 1024
    return settings


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def _logs(client: httpx.Client, name: str) -> str:
    return client.get(f"/v1/namespaces/{NS}/functions/{name}/logs").text


def _record(client: httpx.Client, name: str, invocation_id: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        rows = client.get(f"/v1/namespaces/{NS}/invocations", params={"function": name})
        return next((r for r in rows.json()["invocations"] if r["id"] == invocation_id), None)

    record: dict[str, Any] = wait_for("the invocation record", found, timeout=30)
    return record


def test_server_sent_events_arrive_while_the_stream_runs(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "sse", SSE, {"timeout_s": 60})
    with httpx.stream("GET", f"{gateway.url}/fn/{NS}/sse", timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert "content-length" not in response.headers
        assert response.headers["transfer-encoding"] == "chunked"
        lines = response.iter_lines()
        # the handler never returns: a buffered answer would give nothing before its
        # 60 s timeout, then a 504
        assert next(lines) == "data: first"
        assert next(lines) == ""
        assert next(lines) == ": keep-alive"


def test_the_record_is_written_when_the_stream_ends(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "finite", FINITE)
    response = httpx.get(f"{gateway.url}/fn/{NS}/finite", timeout=60)
    assert response.status_code == 200
    lines = response.text.splitlines()
    assert [json.loads(line)["i"] for line in lines] == [0, 1, 2, 3, 4]
    record = _record(acme, "finite", response.headers["x-sless-invocation-id"])
    assert record["status"] == 200
    assert record["response_bytes"] == len(response.content)
    # the handler slept 5 x 0.1 s between its chunks: the duration covers the stream
    assert record["duration_ms"] >= 500


@pytest.mark.parametrize(
    ("files", "runtime"),
    [
        (TICKS_SYNC, "python3.11"),
        (TICKS_ASYNC, "python3.11"),
        (TICKS_NODE, "nodejs20"),
        (WRITE_NODE, "nodejs20"),
    ],
    ids=["python-generator", "python-async-generator", "node-async-iterator", "node-write"],
)
def test_a_caller_that_leaves_stops_the_handler(
    gateway: RunningGateway, acme: httpx.Client, files: dict[str, str], runtime: str
) -> None:
    deploy(acme, NS, "ticks", files, {"runtime": runtime, "timeout_s": 300})
    with httpx.stream("GET", f"{gateway.url}/fn/{NS}/ticks", timeout=60) as response:
        assert response.status_code == 200
        invocation_id = response.headers["x-sless-invocation-id"]
        seen = [line for _, line in zip(range(6), response.iter_lines(), strict=False)]
        assert any(line in ("tick 1", "data: 1") for line in seen), seen
    # the caller has gone: the handler is stopped (its finally runs) long before its
    # 100000 ticks of 50 ms
    wait_for("the handler to stop", lambda: "stopped" in _logs(acme, "ticks"), timeout=60)
    ticks = _logs(acme, "ticks").count("tick")
    time.sleep(1)  # were it still running, it would tick 20 more times meanwhile
    assert _logs(acme, "ticks").count("tick") == ticks
    assert ticks < 1000
    record = _record(acme, "ticks", invocation_id)
    assert record["error"] == "client_disconnected"
    assert record["response_bytes"] > 0


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _tree_rss_kib(root: int) -> int:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kib(pid)
        todo += children.get(pid, [])
    return total


def _produced(client: httpx.Client) -> int:
    lines = [line for line in _logs(client, "firehose").splitlines() if "produced" in line]
    return int(lines[-1].split()[-1]) if lines else 0


def test_a_slow_reader_holds_the_handler_back_and_memory_stays_flat(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "firehose", FIREHOSE, {"timeout_s": 600})
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    # a raw socket with a small receive buffer: the test reads at its own pace
    port = int(gateway.url.rsplit(":", 1)[1])
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    sock.connect(("127.0.0.1", port))
    sock.settimeout(60)
    sock.sendall(f"GET /fn/{NS}/firehose HTTP/1.1\r\nhost: t\r\n\r\n".encode())
    received = len(sock.recv(64 * 1024))
    worker = next(iter(backend.pool(NS, "firehose").worker_pids()))
    gateway_before = _rss_kib(os.getpid())
    worker_before = _tree_rss_kib(worker)

    # the caller reads nothing more: wait until the handler is held (it produces no more)
    last = [-1]

    def stalled() -> bool:
        now = _produced(acme)
        held = now == last[0]
        last[0] = now
        return held

    wait_for("the handler to be held back", stalled, timeout=120, interval=1.0)
    produced = _produced(acme)
    gateway_held = _rss_kib(os.getpid())
    worker_held = _tree_rss_kib(worker)
    total = CHUNK * TOTAL_CHUNKS
    # all that can be ahead of the reader: kernel socket buffers and the gateway's high
    # water mark (256 KiB); unbounded, it would be the whole 256 MiB
    assert produced < 24 * 1024 * 1024, produced
    assert worker_held - worker_before < 16 * 1024, (worker_before, worker_held)
    assert gateway_held - gateway_before < 32 * 1024, (gateway_before, gateway_held)

    # reading on, every byte arrives: the stream was held, not dropped
    while True:
        data = sock.recv(1024 * 1024)
        received += len(data)
        if not data or data.endswith(b"\r\n0\r\n\r\n"):
            break
    sock.close()
    assert received > total
    assert _produced(acme) == total

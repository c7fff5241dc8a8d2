"""Attack: a streamed answer that never ends, stalls forever, or never stops growing.

A stream holds a worker, a concurrency slot of its tenant and a connection for as long as
it lasts. The function's timeout bounds the whole stream (not just its start), an idle
limit bounds the wait between chunks, and the response limit counts what was sent. In
each case the caller sees the stream cut short (no last chunk), the worker is stopped,
the tenant's slot comes back, and the record says why.
"""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, wait_for

pytestmark = pytest.mark.integration

NS = "sless-acme"

FOREVER = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    while True:\n"
        "        yield 'data: more\\n\\n'\n"
        "        time.sleep(0.1)\n"
    )
}
STALLS = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    yield 'data: one\\n\\n'\n"
        "    time.sleep(3600)\n"
        "    yield 'data: never\\n\\n'\n"
    )
}
GROWS = {
    "handler.py": (
        "CHUNK = b'g' * 65536\ndef handle(event, context):\n    while True:\n        yield CHUNK\n"
    )
}
LIMIT = 4 * 1024 * 1024


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.gateway.stream_idle_timeout_s = 2
    settings.gateway.max_response_bytes = LIMIT
    settings.limits.invoke_concurrency = 1
    return settings


def _record(client: httpx.Client, name: str, invocation_id: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        rows = client.get(f"/v1/namespaces/{NS}/invocations", params={"function": name})
        return next((r for r in rows.json()["invocations"] if r["id"] == invocation_id), None)

    record: dict[str, Any] = wait_for("the invocation record", found, timeout=60)
    return record


def _read_until_cut(url: str, path: str) -> tuple[bytes, bytes]:
    """Read a response off a raw socket until the gateway closes it: (head, the rest)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=120) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nhost: t\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(1 << 20):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


@pytest.mark.parametrize(
    ("name", "files", "spec", "error", "reason"),
    [
        ("forever", FOREVER, {"timeout_s": 3}, "timeout", "timed out after 3 s"),
        ("stalls", STALLS, {"timeout_s": 300}, "timeout", "sent nothing for 2 s"),
        ("grows", GROWS, {"timeout_s": 300}, "bad_gateway", "response larger than 4 MiB"),
    ],
)
def test_a_stream_is_cut_and_its_worker_stopped(
    gateway: RunningGateway,
    name: str,
    files: dict[str, str],
    spec: dict[str, Any],
    error: str,
    reason: str,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, name, files, spec)
    head, rest = _read_until_cut(gateway.url, f"/fn/{NS}/{name}")
    assert head.startswith(b"HTTP/1.1 200")
    assert b"transfer-encoding: chunked" in head.lower()
    # cut short: the caller can tell (no last chunk)
    assert not rest.endswith(b"0\r\n\r\n")
    invocation_id = next(
        line.split(b":", 1)[1].strip().decode()
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"x-sless-invocation-id:")
    )
    record = _record(acme, name, invocation_id)
    assert record["error"] == error
    assert reason in (record["reason"] or "")
    assert 0 < record["response_bytes"] <= LIMIT
    # the worker was stopped, and the tenant's one slot is free again
    pool = gateway.app.api.state.platform.backend.pool(NS, name)  # type: ignore[attr-defined]
    assert pool.killed_on_timeout + pool.crashed >= 1 or error == "bad_gateway"
    assert reason in acme.get(f"/v1/namespaces/{NS}/functions/{name}/logs").text
    deploy(acme, NS, "hello", {"handler.py": "def handle(e, c):\n    return 'hi'\n"})
    assert httpx.get(f"{gateway.url}/fn/{NS}/hello", timeout=60).status_code == 200

"""A streamed answer through ``sless up`` as it serves (behind the admission wrapper), with
each server a deployment runs: granian, and ``express``, whose express path hands a
streamed answer to the ASGI path's relay once its head has come (sless.gateway.express).
Server-sent events arrive while the handler runs; the caller leaving stops the handler;
the record is written with the bytes sent. The integration tests run the app under
uvicorn in-process; this is the server and wrapper a deployment runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ADMIN_TOKEN, free_port
from tests.support import deploy, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
TICKS = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    def gen():\n"
        "        try:\n"
        "            for i in range(100000):\n"
        "                print('tick', i, flush=True)\n"
        "                yield f'data: {i}\\n\\n'\n"
        "                time.sleep(0.05)\n"
        "        finally:\n"
        "            print('stopped', flush=True)\n"
        "    return {'statusCode': 200, 'headers': {'content-type': 'text/event-stream'},\n"
        "            'body': gen()}\n"
    )
}


#: each server, and the ``Server`` header its answers carry
SERVERS = {"granian": b"granian", "express": b"uvicorn"}


@pytest.fixture(params=sorted(SERVERS))
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    runtime_dir = Path(tempfile.mkdtemp(prefix="sst-", dir="/tmp"))
    runtime_dir.chmod(0o755)
    env = {
        **os.environ,
        "SLESS_ADMIN_TOKEN": ADMIN_TOKEN,
        "SLESS_DATA_DIR": str(tmp_path / "data"),
        "TMPDIR": str(runtime_dir),
        "SLESS_GATEWAY_HTTP": request.param,
    }
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "sless.cli", "up", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def ready() -> bool:
            if server.poll() is not None:
                raise AssertionError((tmp_path / "server.log").read_text()[-2000:])
            try:
                return httpx.get(f"{url}/readyz").status_code == 200
            except httpx.TransportError:
                return False

        wait_for("sless up", ready, timeout=180, interval=0.2)
        yield request.param, url
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
        shutil.rmtree(runtime_dir, ignore_errors=True)


def test_a_stream_through_sless_up(served: tuple[str, str]) -> None:
    http, url = served
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
    ) as admin:
        token = admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as acme:
        _stream_and_leave(url, acme, SERVERS[http])


def _stream_and_leave(served: str, acme: httpx.Client, server: bytes) -> None:
    deploy(acme, "sless-acme", "ticks", TICKS, {"timeout_s": 300})
    port = int(served.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(
            b"POST /fn/sless-acme/ticks HTTP/1.1\r\nhost: t\r\ncontent-length: 2\r\n\r\nhi"
        )
        data = b""
        while data.count(b"data: ") < 3:
            data += sock.recv(4096)
    head = data.split(b"\r\n\r\n")[0].lower()
    assert head.startswith(b"http/1.1 200")
    assert b"server: " + server in head
    assert b"transfer-encoding: chunked" in head
    invocation_id = next(
        line.split(b":", 1)[1].strip().decode()
        for line in head.split(b"\r\n")
        if line.startswith(b"x-sless-invocation-id:")
    )

    def logs() -> str:
        return acme.get("/v1/namespaces/sless-acme/functions/ticks/logs").text

    wait_for("the handler to stop", lambda: "stopped" in logs(), timeout=60)
    ticks = logs().count("tick")
    time.sleep(1)  # were it still running, it would tick 20 more times meanwhile
    assert logs().count("tick") == ticks

    def record() -> dict[str, object] | None:
        rows = acme.get("/v1/namespaces/sless-acme/invocations", params={"function": "ticks"})
        return next((r for r in rows.json()["invocations"] if r["id"] == invocation_id), None)

    found = wait_for("the record", record, timeout=30)
    assert found["status"] == 200
    assert found["error"] == "client_disconnected"
    assert found["response_bytes"] >= len(b"data: 0\n\n") * 3

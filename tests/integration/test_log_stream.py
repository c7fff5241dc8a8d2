"""``GET .../logs/stream`` and ``sless logs -f`` on it: a real gateway, real workers.

The stream sends the last ``tail`` lines (with the time they were written), then each line
the function writes, with the time it was read and the invocation id the line names; another tenant
cannot open it; a namespace holds a bounded number of streams.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from sless.gateway.routers import logs as log_routes
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

SLESS = str(Path(sys.executable).parent / "sless")
CHATTY = {
    "handler.py": (
        "def handle(event, context):\n"
        "    print('saw', event['query'].get('n', '-'))\n"
        "    if event['query'].get('fail'):\n"
        "        raise RuntimeError('kaboom')\n"
        "    return {'ok': True}\n"
    )
}
STREAM = "/v1/namespaces/sless-acme/functions/chatty/logs/stream"


class Events:
    """The events of one open stream, read in a thread."""

    def __init__(self, client: httpx.Client, path: str, tail: int) -> None:
        self.events: list[dict[str, object]] = []
        self.status = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(client, path, tail), daemon=True)
        self._thread.start()

    def _read(self, client: httpx.Client, path: str, tail: int) -> None:
        try:
            self._stream(client, path, tail)
        except httpx.HTTPError:
            if not self._done.is_set():  # the gateway ended the stream while it was read
                raise

    def _stream(self, client: httpx.Client, path: str, tail: int) -> None:
        with client.stream("GET", path, params={"tail": tail}, timeout=None) as response:
            self.status = response.status_code
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if self._done.is_set():
                    return
                if line.startswith("data: "):
                    self.events.append(json.loads(line[len("data: ") :]))

    def close(self) -> None:
        self._done.set()

    def until(self, text: str) -> dict[str, object]:
        for _ in range(400):
            found = [e for e in self.events if text in str(e["line"])]
            if found:
                return found[0]
            time.sleep(0.1)
        raise AssertionError(f"no event with {text!r}: {self.events}")


def test_the_stream_sends_the_backlog_then_each_new_line_with_its_time_and_call(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, "sless-acme", "chatty", CHATTY)
    httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=before")
    stream = Events(acme, STREAM, tail=5)
    try:
        backlog = stream.until("saw before")
        # the backlog's time is when the line was written (this gateway remembers it)
        assert isinstance(backlog["time"], str)
        assert str(backlog["time"]).endswith("Z")
        called = httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=live")
        live = stream.until("saw live")
        # a line the code printed names its call (the runtime prefixes it)
        assert live["invocation_id"] == called.headers["x-sless-invocation-id"]
        assert isinstance(live["time"], str)
        assert str(backlog["time"]) <= live["time"]
        assert str(live["time"]).endswith("Z")
        failed = httpx.get(f"{gateway.url}/fn/sless-acme/chatty?fail=1&n=x")
        assert failed.status_code == 500
        call = failed.headers["x-sless-invocation-id"]
        traceback = stream.until("kaboom")
        assert traceback["invocation_id"] == call
        assert stream.status == 200
    finally:
        stream.close()
        httpx.get(f"{gateway.url}/fn/sless-acme/chatty")  # a line wakes the reader to end


def test_another_tenant_cannot_follow_the_log(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    other = gateway.tenant("other")
    deploy(acme, "sless-acme", "chatty", CHATTY)
    response = other.get(STREAM, params={"tail": 1})
    assert response.status_code in (403, 404)
    assert "saw" not in response.text
    missing = acme.get("/v1/namespaces/sless-acme/functions/nothing/logs/stream")
    assert missing.status_code == 404


def test_a_namespace_holds_a_bounded_number_of_streams(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, "sless-acme", "chatty", CHATTY)
    streams = [Events(acme, STREAM, tail=0) for _ in range(log_routes.MAX_STREAMS)]
    try:
        for _ in range(400):
            if sum(log_routes._open.values()) >= log_routes.MAX_STREAMS:
                break
            time.sleep(0.05)
        assert log_routes._open["sless-acme"] == log_routes.MAX_STREAMS
        refused = acme.get(STREAM, params={"tail": 0})
        assert refused.status_code == 429
    finally:
        for stream in streams:
            stream.close()
        # a closed stream gives its place back (the gateway sees the disconnect)
        for _ in streams:
            httpx.get(f"{gateway.url}/fn/sless-acme/chatty")  # output wakes the readers
        for _ in range(400):
            if log_routes._open["sless-acme"] == 0:
                break
            time.sleep(0.05)
    assert log_routes._open["sless-acme"] == 0


def test_sless_logs_follow_prints_each_line_with_its_time(
    gateway: RunningGateway, tmp_path: Path
) -> None:
    token = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
    acme = gateway.client(token)
    deploy(acme, "sless-acme", "chatty", CHATTY)
    env = {
        **os.environ,
        "SLESS_URL": gateway.url,
        "SLESS_TOKEN": token,
        "XDG_CONFIG_HOME": str(tmp_path),
    }
    follower = subprocess.Popen(
        [SLESS, "logs", "chatty", "-f", "--tail", "3"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(follower.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        # the follower prints this line (from its backlog or live): its stream is open
        for attempt in range(200):
            httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=opened{attempt}")
            if any("saw opened" in line for line in lines):
                break
            time.sleep(0.2)
        httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=live")
        for _ in range(200):
            if any("saw live" in line for line in lines):
                break
            time.sleep(0.1)
        live = [line for line in lines if "saw live" in line]
        assert live, lines
        # 03:50:01.123Z saw live
        stamp = live[0].split()[0]
        assert stamp.endswith("Z")
        assert stamp.count(":") == 2
    finally:
        follower.terminate()
        follower.communicate(timeout=30)


def test_sless_logs_since_prints_only_what_was_written_after(
    gateway: RunningGateway, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    token = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
    acme = gateway.client(token)
    deploy(acme, "sless-acme", "chatty", CHATTY)
    env = {
        **os.environ,
        "SLESS_URL": gateway.url,
        "SLESS_TOKEN": token,
        "XDG_CONFIG_HOME": str(tmp_path),
    }
    httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=earlier")
    # the earlier line has reached the file (read back), then time moves on
    for _ in range(100):
        if "saw earlier" in acme.get("/v1/namespaces/sless-acme/functions/chatty/logs").text:
            break
        time.sleep(0.1)
    time.sleep(1.0)
    cut = datetime.now(UTC).isoformat()
    time.sleep(0.1)
    httpx.get(f"{gateway.url}/fn/sless-acme/chatty?n=later")

    def logs(*args: str) -> str:
        done = subprocess.run(
            [SLESS, "logs", "chatty", *args], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout

    since_cut = logs("--since", cut)
    assert "saw later" in since_cut
    assert "saw earlier" not in since_cut
    assert "saw earlier" in logs("--since", "10m")
    assert "saw earlier" in logs()
    bad = subprocess.run(
        [SLESS, "logs", "chatty", "--since", "yesterday"], env=env, capture_output=True, text=True
    )
    assert bad.returncode != 0
    assert "--since takes 10m" in bad.stderr

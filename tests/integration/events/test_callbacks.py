"""Callbacks of asynchronous invocations, received by a real HTTP server on a test host.

The receiver runs on its own host (a network namespace, ``tests.netns``) because the
egress rules refuse loopback; it logs every request it gets to a file the tests read.
Paths choose its answer: ``/status/<code>`` answers ``<code>``, ``/redirect`` answers 302.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.conftest import ECHO, FAILING, wait_for
from tests.netns import netns_host
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"
#: the two ends of the test host's veth pair: the near one in the suite's own network
#: namespace (sless-tests), the receiver's in the one netns_host makes (tests/netns.py)
HOST_IP = "10.251.1.1"
RECEIVER_IP = "10.251.1.2"
PORT = 18091
#: nothing listens there on the test host: connections are refused
DOWN_PORT = 18092
SECRET = "cb-signing-key-0123456789"

RECEIVER = """
import base64, http.server, json, sys
ip, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]

class Handler(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        with open(log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": {k.lower(): v for k, v in self.headers.items()},
                                "body": base64.b64encode(body).decode()}) + "\\n")
        if self.path.startswith("/status/"):
            status = int(self.path.rsplit("/", 1)[1])
        elif self.path == "/redirect":
            status = 302
        else:
            status = 200
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "/landed")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer((ip, port), Handler).serve_forever()
"""


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The receiver on its own host at RECEIVER_IP:PORT; yields its request log."""
    directory = tmp_path_factory.mktemp("receiver")
    script = directory / "receiver.py"
    script.write_text(RECEIVER)
    log = directory / "requests.jsonl"
    log.touch(mode=0o666)
    command = [sys.executable, str(script), RECEIVER_IP, str(PORT), str(log)]
    with netns_host(HOST_IP, RECEIVER_IP, PORT, command):
        yield log


def received(log: Path, invocation_id: str) -> list[dict[str, Any]]:
    """The callbacks the receiver got for one invocation."""
    requests = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [r for r in requests if r["headers"].get("x-sless-invocation-id") == invocation_id]


def _status(client: httpx.Client, invocation_id: str) -> dict[str, Any]:
    response = client.get(f"/v1/namespaces/{NS}/invocations/{invocation_id}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def _call_async(gateway: RunningGateway, function: str, payload: object = None) -> str:
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/{function}", json=payload, headers={"X-Sless-Async": "true"}
    )
    assert response.status_code == 202, response.text
    invocation_id: str = response.json()["invocation_id"]
    return invocation_id


def _callback_outcome(client: httpx.Client, invocation_id: str) -> dict[str, Any]:
    """Wait until the call ended and its callback outcome is recorded; the status."""
    status: dict[str, Any] = wait_for(
        lambda: (s := _status(client, invocation_id)).get("callback") and s,
        "the callback outcome",
        show=lambda: _status(client, invocation_id),
    )
    return status


def _secret(client: httpx.Client, name: str, value: str) -> None:
    response = client.put(f"/v1/namespaces/{NS}/secrets/{name}", json={"value": value})
    assert response.status_code in (200, 201), response.text


def test_callback_is_delivered_with_the_result_and_a_valid_signature(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    _secret(acme, "cb-key", SECRET)
    deploy(
        acme,
        NS,
        "echo",
        ECHO,
        {
            "egress": [f"10.251.1.0/30:{PORT}"],
            "callback_url": f"http://{RECEIVER_IP}:{PORT}/hook?source=sless",
            "callback_secret": "cb-key",
        },
    )
    invocation_id = _call_async(gateway, "echo", {"n": 7})
    status = _callback_outcome(acme, invocation_id)
    assert status["state"] == "succeeded"
    callback = status["callback"]
    assert callback["state"] == "delivered", callback
    assert callback["status"] == 200
    assert callback["attempts"] == 1
    assert callback["host"] == f"{RECEIVER_IP}:{PORT}"

    [request] = received(receiver, invocation_id)
    assert request["method"] == "POST"
    assert request["path"] == "/hook?source=sless"
    headers = request["headers"]
    assert headers["content-type"] == "application/json"
    body = base64.b64decode(request["body"])
    # the signature covers "<timestamp>.<body>" under the secret's value
    expected = hmac.new(
        SECRET.encode(), headers["x-sless-timestamp"].encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    assert hmac.compare_digest(headers["x-sless-signature"], f"sha256={expected}")
    assert SECRET not in json.dumps(request)
    document = json.loads(body)
    assert document["invocation_id"] == invocation_id
    assert document["namespace"] == NS
    assert document["function"] == "echo"
    assert document["state"] == "succeeded"
    assert document["status"] == 200
    assert document["attempts"] == 1
    assert document["error"] is None
    for key in ("created_at", "started_at", "finished_at"):
        assert document[key], key
    result = document["result"]
    assert result["encoding"] == "text"
    assert result["truncated"] is False
    assert result["content_type"].startswith("application/json")
    assert json.loads(result["data"])["body"] == {"n": 7}


def test_unsigned_callback_still_names_the_invocation(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    spec = {"egress": [f"{RECEIVER_IP}:{PORT}"], "callback_url": f"http://{RECEIVER_IP}:{PORT}/"}
    deploy(acme, NS, "plain", ECHO, spec)
    invocation_id = _call_async(gateway, "plain")
    assert _callback_outcome(acme, invocation_id)["callback"]["state"] == "delivered"
    [request] = received(receiver, invocation_id)
    assert "x-sless-signature" not in request["headers"]


def test_a_host_not_in_the_allowlist_gets_no_callback(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    # the allowlist names another port of the same host: the callback's is not listed
    spec = {
        "egress": [f"{RECEIVER_IP}:{PORT + 100}"],
        "callback_url": f"http://{RECEIVER_IP}:{PORT}/",
    }
    deploy(acme, NS, "unlisted", ECHO, spec)
    invocation_id = _call_async(gateway, "unlisted")
    status = _callback_outcome(acme, invocation_id)
    assert status["state"] == "succeeded"
    callback = status["callback"]
    assert callback["state"] == "refused", callback
    assert callback["attempts"] == 0
    assert "egress" in callback["message"]
    assert received(receiver, invocation_id) == []


class _LoopbackReceiver(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_POST(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback_receiver() -> Iterator[tuple[int, list[str]]]:
    """A real receiver on this host's loopback: the rules must never let a callback in."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LoopbackReceiver)
    _LoopbackReceiver.hits = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _LoopbackReceiver.hits
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "destination",
    ["127.0.0.1:{port}", "localhost:{port}", "169.254.169.254:80", "[::1]:{port}"],
)
def test_loopback_and_metadata_are_refused_even_when_listed(
    gateway: RunningGateway,
    acme: httpx.Client,
    loopback_receiver: tuple[int, list[str]],
    destination: str,
) -> None:
    port, hits = loopback_receiver
    where = destination.format(port=port)
    spec = {"egress": [where], "callback_url": f"http://{where}/steal"}
    if not destination.startswith("localhost"):
        # an address listed outright is refused when the spec is put (sless.models.reach)
        refused = acme.put(f"/v1/namespaces/{NS}/functions/ssrf", json=spec)
        assert refused.status_code == 422, refused.text
        assert "never reachable" in refused.text
        # a rule that covers it among public addresses is taken: the callback refuses it
        wide = "[::/0]" if where.startswith("[") else "0.0.0.0/0"
        spec["egress"] = [f"{wide}:{where.rpartition(':')[2]}"]
    deploy(acme, NS, "ssrf", ECHO, spec)
    invocation_id = _call_async(gateway, "ssrf")
    callback = _callback_outcome(acme, invocation_id)["callback"]
    assert callback["state"] == "refused", callback
    assert callback["attempts"] == 0
    assert hits == []


def test_a_receiver_that_is_down_is_retried_then_recorded_as_failed(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    spec = {
        "egress": [f"10.251.1.0/30:{DOWN_PORT}"],
        "callback_url": f"http://{RECEIVER_IP}:{DOWN_PORT}/",
    }
    deploy(acme, NS, "down", ECHO, spec)
    invocation_id = _call_async(gateway, "down")
    status = _callback_outcome(acme, invocation_id)
    assert status["state"] == "succeeded"  # the call itself is not affected
    callback = status["callback"]
    assert callback["state"] == "failed", callback
    assert callback["attempts"] == 3
    assert callback["status"] is None
    assert "cannot deliver" in callback["message"]


def test_a_5xx_answer_is_retried_and_a_redirect_is_not_followed(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    egress = [f"10.251.1.0/30:{PORT}"]
    base = f"http://{RECEIVER_IP}:{PORT}"
    deploy(acme, NS, "busy", ECHO, {"egress": egress, "callback_url": f"{base}/status/503"})
    deploy(acme, NS, "moved", ECHO, {"egress": egress, "callback_url": f"{base}/redirect"})
    busy = _call_async(gateway, "busy")
    moved = _call_async(gateway, "moved")

    callback = _callback_outcome(acme, busy)["callback"]
    assert callback == {**callback, "state": "failed", "status": 503, "attempts": 3}
    assert len(received(receiver, busy)) == 3

    callback = _callback_outcome(acme, moved)["callback"]
    assert callback == {**callback, "state": "failed", "status": 302, "attempts": 1}
    assert [r["path"] for r in received(receiver, moved)] == ["/redirect"]
    landed = [line for line in receiver.read_text().splitlines() if '"path": "/landed"' in line]
    assert landed == []


def test_a_dead_lettered_call_sends_its_failure_callback(
    gateway: RunningGateway, acme: httpx.Client, receiver: Path
) -> None:
    spec = {"egress": [f"10.251.1.0/30:{PORT}"], "callback_url": f"http://{RECEIVER_IP}:{PORT}/"}
    deploy(acme, NS, "fails", FAILING, spec)
    invocation_id = _call_async(gateway, "fails")
    status = _callback_outcome(acme, invocation_id)
    assert status["state"] == "dead"
    assert status["callback"]["state"] == "delivered"
    [request] = received(receiver, invocation_id)  # one callback, for the final state only
    document = json.loads(base64.b64decode(request["body"]))
    assert document["state"] == "dead"
    assert document["status"] >= 500
    assert document["attempts"] == 3
    assert document["max_attempts"] == 3

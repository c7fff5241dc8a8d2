"""The runtime servers' adapters, over raw HTTP on the worker socket: what only the platform
sends (a cron tick's ``sless-tick``, a job's ``sless-trigger``: the gateway drops both from
callers) becomes the event Lambda would deliver, and the lifecycle hooks run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.runtimes.harness import exchange, start_files, stop_server

PY_ECHO = {"lambda_function.py": "def lambda_handler(event, context):\n    return event\n"}
JS_ECHO = {"index.js": "exports.handler = async (event) => event;\n"}
ECHOES = {
    "python3.11": (PY_ECHO, "lambda_function.lambda_handler"),
    "nodejs20": (JS_ECHO, "index.handler"),
}


def _post(body: bytes, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return (
        f"POST / HTTP/1.1\r\nHost: w\r\nConnection: close\r\ncontent-type: application/json\r\n"
        f"{head}content-length: {len(body)}\r\n\r\n"
    ).encode() + body


def _json(answer: bytes) -> object:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), answer[:300]
    return json.loads(body)


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
def test_lambda_cron_tick_is_an_eventbridge_scheduled_event(runtime: str, tmp_path: Path) -> None:
    files, entrypoint = ECHOES[runtime]
    server = start_files(runtime, tmp_path, files, entrypoint=entrypoint, SLESS_INTERFACE="lambda")
    try:
        tick = _post(
            b"null",
            "sless-trigger: nightly",
            "sless-tick: 2026-01-02T03:04:00+00:00",
            "x-sless-invocation-id: inv-1",
        )
        assert _json(exchange(server, tick)) == {
            "version": "0",
            "id": "inv-1",
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "anonymous",
            "time": "2026-01-02T03:04:00Z",
            "region": "ns1",
            "resources": ["arn:sless:events:ns1:rule/nightly"],
            "detail": {},
        }
        # a tick with a payload delivers it as EventBridge's constant input; a job (an
        # async invoke) delivers its payload as the event
        with_input = _post(b'{"k": 1}', "sless-trigger: t", "sless-tick: 2026-01-02T03:04:00+00:00")
        assert _json(exchange(server, with_input)) == {"k": 1}
        job = _post(b'{"order": 7}', "sless-trigger: job/j1")
        assert _json(exchange(server, job)) == {"order": 7}
    finally:
        stop_server(server)


def test_knative_python_lifecycle_hooks(tmp_path: Path) -> None:
    files = {
        "function/__init__.py": "from .func import new\n",
        "function/func.py": (
            "import sys\n"
            "def new():\n    return F()\n"
            "class F:\n"
            "    def start(self, cfg):\n        self.cfg = cfg\n"
            "    def stop(self):\n        print('STOPPED', file=sys.stderr, flush=True)\n"
            "    def alive(self):\n        return False, 'wedged'\n"
            "    async def handle(self, scope, receive, send):\n"
            "        await send({'type': 'http.response.start', 'status': 200, 'headers': []})\n"
            "        await send({'type': 'http.response.body', 'body': self.cfg['SLESS_FUNCTION'].encode()})\n"
        ),
    }
    server = start_files(
        "python3.11", tmp_path, files, entrypoint="function.func.new", SLESS_INTERFACE="knative"
    )
    try:
        answer = exchange(server, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        assert answer.endswith(b"\r\n\r\nfn1")
        alive = exchange(server, b"GET /health/liveness HTTP/1.1\r\nConnection: close\r\n\r\n")
        assert alive.startswith(b"HTTP/1.1 500") and alive.endswith(b"wedged")
    finally:
        stop_server(server)
    assert "STOPPED" in server.log_text()


def test_unknown_interface_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="unknown interface 'azure'"):
        start_files(
            "python3.11",
            tmp_path,
            PY_ECHO,
            entrypoint="lambda_function.lambda_handler",
            SLESS_INTERFACE="azure",
        )

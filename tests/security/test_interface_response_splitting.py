"""Attack: a handler written to a peer's contract answers with a header that splits the
response (CR/LF in a value or a name) or that impersonates the platform (``X-Sless-*``), to
forge a second response or a Set-Cookie for the caller, or to spoof the invocation id.

Every adapter hands what the code answers to the runtime server's one header check
(``checked_headers`` / ``checkedHeaders``), exactly as the ``sless`` contract does: the call
fails (5xx) and nothing injected reaches the wire. Each handler runs in a real sandboxed
worker (bubblewrap, and gVisor where runsc is built), its adapter picked by the same
variables the gateway and the pod set."""

from __future__ import annotations

import asyncio
import dataclasses
import socket
from pathlib import Path

import pytest

from sless.models import FunctionSpec, Interface
from tests.integration.sandbox.harness import launch, make_spec

pytestmark = pytest.mark.integration


def _exchange(path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(20)
        s.connect(str(path))
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


EVIL = "ok\\r\\nSet-Cookie: stolen=1\\r\\n\\r\\nHTTP/1.1 200 OK"

#: (runtime, interface, entrypoint, files): a handler that answers with EVIL in a header
#: when the path is /split, and with X-Sless-Invocation-Id: forged on /spoof
CASES = [
    (
        "python3.11",
        "lambda",
        "lambda_function.lambda_handler",
        {
            "lambda_function.py": f'''
def lambda_handler(event, context):
    if event["rawPath"] == "/split":
        return {{"statusCode": 200, "headers": {{"x-a": "{EVIL}"}}, "body": ""}}
    spoofed = {{"X-Sless-Invocation-Id": ["forged"]}}
    return {{"statusCode": 200, "multiValueHeaders": spoofed, "body": "x"}}
'''
        },
    ),
    (
        "python3.11",
        "openfaas",
        "handler.handle",
        {
            "handler.py": f'''
def handle(event, context):
    if event.path == "/split":
        return {{"statusCode": 200, "headers": [("x-a", "{EVIL}")], "body": ""}}
    return {{"statusCode": 200, "headers": {{"X-Sless-Invocation-Id": "forged"}}, "body": "x"}}
'''
        },
    ),
    (
        "python3.11",
        "asgi",
        "app.app",
        {
            "app.py": f'''
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    if scope["path"] == "/split":
        name, value = b"x-a", "{EVIL}".encode()
    else:
        name, value = b"x-sless-invocation-id", b"forged"
    await send({{"type": "http.response.start", "status": 200, "headers": [(name, value)]}})
    await send({{"type": "http.response.body", "body": b"x"}})
'''
        },
    ),
    (
        "python3.11",
        "knative",
        "function.func.new",
        {
            "function/__init__.py": "",
            "function/func.py": """
def new():
    return F()

class F:
    async def handle(self, scope, receive, send):
        name = b"x-a\\r\\nset-cookie" if scope["path"] == "/split" else b"x-sless-invocation-id"
        await send({"type": "http.response.start", "status": 200, "headers": [(name, b"forged")]})
        await send({"type": "http.response.body", "body": b"x"})
""",
        },
    ),
    (
        "python3.11",
        "wsgi",
        "app.app",
        {
            "app.py": f'''
def app(environ, start_response):
    if environ["PATH_INFO"] == "/split":
        start_response("200 OK", [("X-A", "{EVIL}")])
    else:
        start_response("200 OK", [("X-Sless-Invocation-Id", "forged")])
    return [b"x"]
'''
        },
    ),
    (
        "nodejs20",
        "lambda",
        "index.handler",
        {
            "index.js": f'''
exports.handler = async (event) => event.rawPath === '/split'
  ? {{ statusCode: 200, headers: {{ 'x-a': "{EVIL}" }}, body: '' }}
  : {{ statusCode: 200, multiValueHeaders: {{ 'X-Sless-Invocation-Id': ['forged'] }}, body: 'x' }};
'''
        },
    ),
    (
        "nodejs20",
        "openfaas",
        "handler.handle",
        {
            "handler.js": f'''
module.exports = async (event, context) => event.path === '/split'
  ? context.headers({{ 'x-a': "{EVIL}" }}).succeed('')
  : context.headers({{ 'X-Sless-Invocation-Id': 'forged' }}).succeed('x');
'''
        },
    ),
    (
        "nodejs20",
        "knative",
        "index.handle",
        {
            "index.js": f'''
exports.handle = async (context) => context.query.p === 'split'
  ? {{ headers: {{ 'x-a': "{EVIL}" }}, body: '' }}
  : {{ headers: {{ 'X-Sless-Invocation-Id': 'forged' }}, body: 'x' }};
'''
        },
    ),
]


@pytest.mark.parametrize(
    ("runtime", "interface", "entrypoint", "files"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
async def test_adapter_refuses_split_and_spoofed_headers(
    runtime: str, interface: str, entrypoint: str, files: dict[str, str], tmp_path: Path
) -> None:
    code = tmp_path / "code"
    for name, source in files.items():
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_text(source)
    function = FunctionSpec.model_validate({"runtime": runtime, "interface": interface})
    assert function.interface is Interface(interface)
    spec = make_spec(tmp_path, runtime=runtime, entrypoint=entrypoint)  # type: ignore[arg-type]
    spec = dataclasses.replace(spec, interface_env=function.interface_env())
    worker = await launch(spec)
    try:
        split = await asyncio.to_thread(
            _exchange,
            worker.socket_path,
            b"GET /split?p=split HTTP/1.1\r\nHost: w\r\nx-sless-invocation-id: real-1\r\n"
            b"Connection: close\r\n\r\n",
        )
        status = int(split.split(b" ", 2)[1])
        assert 500 <= status <= 599, split[:300]
        assert b"stolen" not in split.lower()
        assert split.count(b"HTTP/1.1") == 1
        spoof = await asyncio.to_thread(
            _exchange,
            worker.socket_path,
            b"GET /spoof HTTP/1.1\r\nHost: w\r\nx-sless-invocation-id: real-2\r\n"
            b"Connection: close\r\n\r\n",
        )
        head = spoof.partition(b"\r\n\r\n")[0].lower()
        assert head.startswith(b"http/1.1 200"), spoof[:300]
        assert b"forged" not in head
        assert b"x-sless-invocation-id: real-2" in head
    finally:
        await worker.stop()

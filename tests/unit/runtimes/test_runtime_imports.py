"""The Python runtime server starts without OpenSSL loaded, and a handler that needs TLS
still gets the real ssl module, in its own imports and inside asyncio."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

from tests.unit.runtimes.harness import base_env, runtime_argv

HANDLER = """
import sys


def handle(event, context):
    if event["query"].get("step") == "idle":
        return {"ssl_loaded": "ssl" in sys.modules}
    import asyncio.base_events
    import asyncio.sslproto
    import ssl

    context = ssl.create_default_context()
    return {
        "ssl_loaded": "ssl" in sys.modules,
        "asyncio_sees_it": isinstance(context, asyncio.sslproto.ssl.SSLContext),
        "base_events": asyncio.base_events.ssl is ssl,
    }
"""


def _get(path: Path, target: str) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])  # type: ignore[no-any-return]


def test_ssl_is_loaded_only_when_the_handler_needs_it(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "handler.py").write_text(HANDLER)
    sock = tmp_path / "worker.sock"
    env = base_env(code, SLESS_ENTRYPOINT="handler.handle", SLESS_SOCKET=str(sock))
    process = subprocess.Popen(runtime_argv("python3.11"), env=env, cwd=code)
    try:
        deadline = time.monotonic() + 15
        while not sock.exists():
            assert process.poll() is None, "the runtime exited"
            assert time.monotonic() < deadline, "the runtime did not bind its socket"
            time.sleep(0.01)
        assert _get(sock, "/?step=idle") == {"ssl_loaded": False}
        assert _get(sock, "/?step=tls") == {
            "ssl_loaded": True,
            "asyncio_sees_it": True,
            "base_events": True,
        }
    finally:
        process.terminate()
        process.wait(5)

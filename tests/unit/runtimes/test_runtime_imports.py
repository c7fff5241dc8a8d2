"""The Python runtime server starts and serves without OpenSSL, inspect, logging, typing
or ipaddress loaded, and a handler that needs one still gets the real module, in its own
imports and inside asyncio (and urllib.parse)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

from tests.unit.runtimes.harness import base_env, runtime_argv

#: what the server must not load until a handler needs it
LEAN = ("ssl", "inspect", "logging", "typing", "ipaddress")

HANDLER = (
    f"LEAN = {LEAN!r}\n"
    + """
import sys


def handle(event, context):
    if event["query"].get("step") == "idle":
        return {name: name in sys.modules for name in LEAN}
    if event["query"].get("step") == "logging":
        import asyncio
        import asyncio.log
        import logging
        import typing
        import urllib.parse

        seen = []

        class Keep(logging.Handler):
            def emit(self, record):
                seen.append((record.name, record.levelname, record.getMessage()))

        logging.getLogger("asyncio").addHandler(Keep())
        logging.getLogger("asyncio").setLevel(logging.DEBUG)
        asyncio.log.logger.debug("debug %s", 1)
        asyncio.log.logger.warning("warned %s", 2)
        logged = list(seen)

        async def timed():
            async with asyncio.timeout(5):
                return typing.get_type_hints(lambda: None)

        return {
            "seen": logged,
            "typing_real": typing.Optional[int] == typing.Union[int, None],
            "timeout_works": asyncio.run(timed()) == {},
            "bracketed_host": urllib.parse.urlsplit("http://[::1]:8/x").hostname,
        }
    if event["query"].get("step") == "inspect":
        import asyncio
        import asyncio.coroutines
        import inspect

        async def probe():
            return 1

        task_repr = asyncio.run(_repr_of_a_task(probe))
        return {
            "inspect_loaded": "inspect" in sys.modules,
            "real": inspect.iscoroutinefunction(probe) and hasattr(inspect, "signature"),
            "asyncio_sees_it": asyncio.iscoroutinefunction(probe),
            "coroutines": asyncio.coroutines.inspect is inspect,
            "task_repr": "probe" in task_repr,
        }
    import asyncio.base_events
    import asyncio.sslproto
    import ssl

    context = ssl.create_default_context()
    return {
        "ssl_loaded": "ssl" in sys.modules,
        "asyncio_sees_it": isinstance(context, asyncio.sslproto.ssl.SSLContext),
        "base_events": asyncio.base_events.ssl is ssl,
    }


async def _repr_of_a_task(coroutine_function):
    import asyncio

    task = asyncio.ensure_future(coroutine_function())
    text = repr(task)
    await task
    return text
"""
)


def _get(path: Path, target: str) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])  # type: ignore[no-any-return]


def test_lean_modules_are_loaded_only_when_the_handler_needs_them(tmp_path: Path) -> None:
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
        idle = dict.fromkeys(LEAN, False)
        assert _get(sock, "/?step=idle") == idle
        assert _get(sock, "/?step=idle") == idle, "serving a call loaded one of them"
        assert _get(sock, "/?step=logging") == {
            "seen": [["asyncio", "DEBUG", "debug 1"], ["asyncio", "WARNING", "warned 2"]],
            "typing_real": True,
            "timeout_works": True,
            "bracketed_host": "::1",
        }
        assert _get(sock, "/?step=inspect") == {
            "inspect_loaded": True,
            "real": True,
            "asyncio_sees_it": True,
            "coroutines": True,
            "task_repr": True,
        }
        assert _get(sock, "/?step=tls") == {
            "ssl_loaded": True,
            "asyncio_sees_it": True,
            "base_events": True,
        }
        process.terminate()
        assert process.wait(5) == 0, "SIGTERM did not stop the runtime cleanly"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)

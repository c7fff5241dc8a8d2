"""Test harness for the runtime servers: example handlers, servers started as subprocesses.

Each server is a real ``runtimes/<runtime>/server.*`` process listening on a Unix socket
(or TCP), started once per module and configuration.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

RUNTIMES_DIR = Path(__file__).resolve().parents[3] / "runtimes"
PYTHON = Path(sys.base_prefix) / "bin" / "python3.11"
NODE = shutil.which("node") or "/usr/bin/node"

PY_HANDLER = """
import asyncio
import time


def _route(event, context):
    path = event["path"]
    if path == "/boom":
        raise ValueError("secret detail 42")
    if path == "/none":
        return None
    if path == "/text":
        return {"statusCode": 201, "headers": {"X-Custom": "yes"}, "body": "created"}
    if path == "/named":
        headers = {"Connection": "X-Private, keep-alive", "X-Private": "1", "X-Kept": "yes"}
        return {"statusCode": 200, "headers": headers, "body": "named"}
    if path == "/json-body":
        return {"statusCode": 202, "body": {"a": [1, 2]}}
    if path == "/binary":
        return {"statusCode": 200, "body": "AAEC/w==", "isBase64Encoded": True}
    if path == "/bad-header":
        return {"statusCode": 200, "headers": {"x-a": "b\\r\\nset-cookie: evil=1"}, "body": ""}
    if path == "/print":
        print("hello from the handler")
        return "printed"
    return {
        "event": event,
        "context": {
            "function": context.function,
            "namespace": context.namespace,
            "invocation_id": context.invocation_id,
            "deadline": context.deadline,
            "remaining": context.remaining_time(),
        },
    }


def handle(event, context):
    if event["path"] == "/slow":
        start = time.time()
        time.sleep(0.3)
        return {"start": start, "end": time.time()}
    return _route(event, context)


async def ahandle(event, context):
    if event["path"] == "/slow":
        start = time.time()
        await asyncio.sleep(0.3)
        return {"start": start, "end": time.time()}
    await asyncio.sleep(0)
    return _route(event, context)
"""

JS_HANDLER = r"""
function route(event, context) {
  const path = event.path;
  if (path === '/boom') throw new Error('secret detail 42');
  if (path === '/none') return undefined;
  if (path === '/text') return { statusCode: 201, headers: { 'X-Custom': 'yes' }, body: 'created' };
  if (path === '/named') {
    const headers = { Connection: 'X-Private, keep-alive', 'X-Private': '1', 'X-Kept': 'yes' };
    return { statusCode: 200, headers, body: 'named' };
  }
  if (path === '/json-body') return { statusCode: 202, body: { a: [1, 2] } };
  if (path === '/binary') return { statusCode: 200, body: Buffer.from([0, 1, 2, 255]) };
  if (path === '/bad-header') {
    return { statusCode: 200, headers: { 'x-a': 'b\r\nset-cookie: evil=1' }, body: '' };
  }
  if (path === '/print') { console.log('hello from the handler'); return 'printed'; }
  return {
    event,
    context: {
      function: context.function,
      namespace: context.namespace,
      invocation_id: context.invocation_id,
      deadline: context.deadline,
      remaining: context.remaining_time(),
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

exports.handle = (event, context) => {
  if (event.path === '/slow') {
    const start = Date.now() / 1000;
    const until = Date.now() + 300;
    while (Date.now() < until) { /* a sync handler blocks */ }
    return { start, end: Date.now() / 1000 };
  }
  return route(event, context);
};

exports.ahandle = async (event, context) => {
  if (event.path === '/slow') {
    const start = Date.now() / 1000;
    await sleep(300);
    return { start, end: Date.now() / 1000 };
  }
  await sleep(0);
  return route(event, context);
};
"""

HANDLERS = {"python3.11": ("handler.py", PY_HANDLER), "nodejs20": ("handler.js", JS_HANDLER)}


def runtime_argv(runtime: str, *extra: str) -> list[str]:
    if runtime == "python3.11":
        return [
            str(PYTHON),
            "-I",
            "-S",
            "-u",
            "-B",
            str(RUNTIMES_DIR / runtime / "server.py"),
            *extra,
        ]
    return [NODE, str(RUNTIMES_DIR / runtime / "server.js"), *extra]


def write_code(directory: Path, runtime: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    name, source = HANDLERS[runtime]
    (directory / name).write_text(source)
    return directory


def base_env(code_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "SLESS_CODE_DIR": str(code_dir),
        "SLESS_FUNCTION": "fn1",
        "SLESS_NAMESPACE": "ns1",
        "SLESS_TIMEOUT_S": "30",
    }
    env.update(extra)
    return env


@dataclass
class Server:
    runtime: str
    process: subprocess.Popen[bytes]
    log: Path
    socket_path: Path | None = None
    port: int | None = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def _wait_ready(server: Server, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited {server.process.returncode}: {server.log_text()}")
        try:
            if server.socket_path is not None:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(server.socket_path))
            else:
                assert server.port is not None
                socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.01)
    raise RuntimeError(f"server not ready: {server.log_text()}")


def start_server(
    runtime: str, workdir: Path, *, entrypoint: str, concurrency: int = 1, tcp: bool = False
) -> Server:
    code = write_code(workdir / "code", runtime)
    log = workdir / "log.txt"
    env = base_env(code, SLESS_ENTRYPOINT=entrypoint, SLESS_CONCURRENCY=str(concurrency))
    server_socket: Path | None = None
    port: int | None = None
    if tcp:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env["PORT"] = str(port)
    else:
        server_socket = workdir / "worker.sock"
        env["SLESS_SOCKET"] = str(server_socket)
    with log.open("ab") as out:
        process = subprocess.Popen(
            runtime_argv(runtime), env=env, stdout=out, stderr=subprocess.STDOUT, cwd=code
        )
    server = Server(runtime, process, log, server_socket, port)
    _wait_ready(server)
    return server


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(5)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def start_files(
    runtime: str, workdir: Path, files: dict[str, str], *, entrypoint: str, **env: str
) -> Server:
    """A server of ``files`` (the tenant's code) with extra ``env`` (``SLESS_INTERFACE``...)."""
    code = workdir / "code"
    for name, source in files.items():
        (code / name).parent.mkdir(parents=True, exist_ok=True)
        (code / name).write_text(source)
    server_socket = workdir / "worker.sock"
    log = workdir / "log.txt"
    environ = base_env(code, SLESS_ENTRYPOINT=entrypoint, SLESS_SOCKET=str(server_socket), **env)
    with log.open("ab") as out:
        process = subprocess.Popen(
            runtime_argv(runtime), env=environ, stdout=out, stderr=subprocess.STDOUT, cwd=code
        )
    server = Server(runtime, process, log, server_socket)
    _wait_ready(server)
    return server


def exchange(server: Server, request: bytes) -> bytes:
    """One raw HTTP/1.1 request (``Connection: close``) and the whole answer."""
    assert server.socket_path is not None
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(server.socket_path))
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)

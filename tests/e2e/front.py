"""What ``tests/e2e/test_gateway_front.py`` needs: a platform with the functions it calls,
and HTTP/1.1 spoken over a raw socket.

Raw, because a client library rewrites what these tests check: httpx and urllib set their
own ``Host`` and ``Connection``, drop a request's duplicate framing headers, decode
chunked bodies and never pipeline. Here a request is the bytes written and a response is
parsed from the bytes read, so a second answer, a stray body byte or a missing close is
seen.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.faults.harness import Platform, Tenant, postmasters

#: the function's own timeout (the timeout test sleeps past it)
TIMEOUT_S = 2
#: SLESS_GATEWAY_MAX_RESPONSE_BYTES: small, so that a handler can answer past it
MAX_RESPONSE_BYTES = 64 * 1024
#: SLESS_LIMITS_INVOKE_*: high enough for every test's own calls, low enough to burst over
INVOKE_RATE_PER_S = 20
INVOKE_BURST = 40

#: one handler for every function here; ``?mode=`` picks what it does
HANDLER = """\
import os
import time

BOOT = os.urandom(8).hex()


def handle(event, context):
    query = event["query"]
    mode = query.get("mode", "echo")
    if mode == "sleep":
        time.sleep(float(query["s"]))
    elif mode == "exit":
        os._exit(3)
    elif mode == "raw":
        # a handler owns its worker: it writes on the gateway's connection what it likes
        import socket
        import stat
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                    continue
                sock = socket.socket(fileno=os.dup(fd))
                try:
                    sock.getpeername()
                    status = query["status"]
                    sock.sendall(f"HTTP/1.1 {status} X\\r\\ncontent-length: 0\\r\\n\\r\\n".encode())
                finally:
                    sock.close()
            except OSError:
                continue
        time.sleep(0.5)
        return "late"
    elif mode == "big":
        return {"statusCode": 200, "body": "a" * int(query["n"])}
    elif mode == "headers":
        headers = {
            "Content-Type": "text/plain",
            "Set-Cookie": "a=b; Domain=evil; Path=/; HttpOnly",
            "Service-Worker-Allowed": "/",
            "Clear-Site-Data": '"*"',
            "Keep-Alive": "timeout=99",
            "Proxy-Authenticate": "Basic",
            "X-Sless-Foo": "1",
            "Connection": "X-Private",
            "X-Private": "1",
            "X-Kept": "yes",
        }
        return {"statusCode": 201, "headers": headers, "body": "headers"}
    return {
        "method": event["method"],
        "path": event["path"],
        "query": query,
        "body": event["body"],
        "headers": event["headers"],
        "invocation_id": context.invocation_id,
        "deadline": context.deadline,
        "boot": BOOT,
    }
"""


@dataclass
class Front:
    """A running ``sless up`` with ``mode`` as its HTTP server, and what was called."""

    mode: str
    up: Platform
    tenant: Tenant
    #: another tenant: its token must not call ``tenant``'s functions
    other: Tenant
    #: a tenant of its own for the rate-limit burst, so no other test is refused
    burster: Tenant
    #: the serving version of ``echo`` (``v1``)
    version: str
    #: every invocation id a caller was given, with its status (test 7 checks the records)
    seen: dict[str, int] = field(default_factory=dict)
    #: the ids of calls of no function (never recorded)
    unrecorded: list[str] = field(default_factory=list)

    @property
    def ns(self) -> str:
        return self.tenant.namespace


@contextmanager
def running(mode: str) -> Iterator[Front]:
    """``sless up`` with ``SLESS_GATEWAY_HTTP=mode`` and the functions the tests call,
    each called once (a worker runs); stopped, with its PostgreSQL, at the end."""
    home = Path(tempfile.mkdtemp(prefix=f"sless-front-{mode}-"))
    home.chmod(0o755)  # the embedded PostgreSQL runs as pgserver
    up = Platform(
        home / "data",
        env={
            "SLESS_GATEWAY_HTTP": mode,
            "SLESS_GATEWAY_MAX_RESPONSE_BYTES": str(MAX_RESPONSE_BYTES),
            "SLESS_LIMITS_INVOKE_RATE_PER_S": str(INVOKE_RATE_PER_S),
            "SLESS_LIMITS_INVOKE_BURST": str(INVOKE_BURST),
        },
    )
    try:
        up.start(timeout=180)
        tenant, other, burster = up.tenant("front"), up.tenant("other"), up.tenant("burster")
        # one instance: the call after a worker died is served by a new one
        spec = {"timeout_s": TIMEOUT_S, "max_instances": 1}
        deployed = tenant.deploy("echo", HANDLER, spec)
        tenant.deploy("private", HANDLER, {**spec, "auth": "token"})
        tenant.deploy("gone", HANDLER, {"timeout_s": 10})
        burster.deploy("echo", HANDLER, spec)
        front = Front(mode, up, tenant, other, burster, deployed["status"]["version"])
        for owner, name in [(tenant, "echo"), (tenant, "private"), (tenant, "gone")]:
            with owner.client() as client:  # warm: one worker runs
                assert client.get(f"/fn/{owner.namespace}/{name}").status_code == 200
        yield front
    finally:
        up.stop()
        for pid in postmasters(up.pgdata):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


# -- HTTP/1.1 over a raw socket -------------------------------------------------------


@dataclass
class Response:
    status: int
    #: every header line as sent, names lowercased, in order
    headers: list[tuple[str, str]]
    body: bytes
    #: the interim (1xx) responses sent before this one
    interim: list[int] = field(default_factory=list)

    def header(self, name: str) -> str | None:
        """The one value of ``name``; None if absent (two of them fail the test)."""
        values = self.all(name)
        assert len(values) <= 1, f"{name} sent {len(values)} times: {values}"
        return values[0] if values else None

    def all(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k == name]


def connect(port: int, source: str = "127.0.0.1", timeout: float = 30) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(timeout)
    sock.connect(("127.0.0.1", port))
    return sock


def request(
    method: str,
    target: str,
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
) -> bytes:
    """One request's bytes: ``Host`` first, then ``headers``, then ``Content-Length``
    when there is a body (none is added otherwise: the caller writes its own framing)."""
    lines = [f"{method} {target} HTTP/1.1", "Host: sless.test"]
    lines += [f"{k}: {v}" for k, v in headers or []]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Reader:
    """Responses read one after the other from one connection (its own buffer, not
    ``makefile``: a file object would keep the socket open past its ``with``)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""

    def readline(self, limit: int) -> bytes:
        while b"\n" not in self._buffer and len(self._buffer) < limit:
            if not (data := self._sock.recv(65536)):
                break
            self._buffer += data
        end = self._buffer.find(b"\n") + 1 or min(limit, len(self._buffer))
        line, self._buffer = self._buffer[:end], self._buffer[end:]
        return line

    def read(self, n: int = -1) -> bytes:
        """``n`` bytes (fewer at the end of the stream); all until it ends if ``n < 0``."""
        while n < 0 or len(self._buffer) < n:
            if not (data := self._sock.recv(65536)):
                break
            self._buffer += data
        end = len(self._buffer) if n < 0 else n
        data, self._buffer = self._buffer[:end], self._buffer[end:]
        return data

    def response(self, *, head: bool = False) -> Response:
        """The next final response; the interim ones before it (``100 Continue``) are
        kept in its ``interim``."""
        interim = []
        while (response := self._one(head)).status < 200:
            interim.append(response.status)
        response.interim = interim
        return response

    def _one(self, head: bool) -> Response:
        line = self.readline(65536)
        assert line, "the connection closed before a response"
        version, status, _ = line.decode("latin-1").split(" ", 2)
        assert version == "HTTP/1.1", line
        headers = []
        while (line := self.readline(65536)) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers.append((name.strip().lower(), value.strip()))
        response = Response(int(status), headers, b"")
        if head or response.status in (204, 304) or response.status < 200:
            return response
        if (response.header("transfer-encoding") or "").lower() == "chunked":
            response.body = self._chunked()
        elif (length := response.header("content-length")) is not None:
            response.body = self._exactly(int(length))
        else:
            response.body = self.read()
        return response

    def closed(self, within_s: float = 5) -> bool:
        """The server closed the connection within ``within_s`` (nothing more to read)."""
        self._sock.settimeout(within_s)
        try:
            return self.read(1) == b""
        except (TimeoutError, OSError):
            return False

    def _exactly(self, n: int) -> bytes:
        data = self.read(n)
        assert len(data) == n, f"the body ended after {len(data)} of {n} bytes"
        return data

    def _chunked(self) -> bytes:
        chunks = []
        while size := int(self.readline(1024).split(b";")[0], 16):
            chunks.append(self._exactly(size))
            assert self.readline(1024) == b"\r\n"
        while self.readline(65536) not in (b"\r\n", b""):  # trailers
            pass
        return b"".join(chunks)


def exchange(port: int, data: bytes, count: int = 1, source: str = "127.0.0.1") -> list[Response]:
    """``data`` written at once on a new connection, and the ``count`` responses read."""
    with connect(port, source) as sock:
        sock.sendall(data)
        reader = Reader(sock)
        return [reader.response() for _ in range(count)]

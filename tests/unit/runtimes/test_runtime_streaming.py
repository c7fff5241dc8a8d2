"""The runtime servers' streamed answers, on raw sockets (the framing is what is tested).

Each runtime frames a streaming handler's chunks itself (HTTP/1.1 chunked): an empty
chunk never ends the body early, a failure after the head cuts the answer (no last
chunk, the connection closes), HEAD sends no body, the connection serves the next
request after a stream that ended, and the handler's concurrency slot is held for as
long as the stream lasts.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.runtimes.harness import Server, start_files, stop_server

PY = """
import time

def handle(event, context):
    path = event["path"]
    if path == "/empty":
        return (c for c in ["a", "", b"", "b"])
    if path == "/fails":
        def failing():
            yield "first"
            raise ValueError("mid-stream")
        return failing()
    if path == "/slow":
        def slow():
            yield "x"
            time.sleep(1.5)
            yield "y"
        return slow()
    if path == "/trace":
        return {"trace_id": context.trace_id, "traceparent": context.traceparent}
    return {"statusCode": 206, "headers": {"content-type": "text/event-stream"},
            "body": iter(["data: 1\\n\\n", {"n": 2}])}
"""
NODE = """
exports.handle = async (event, context) => {
  const path = event.path;
  if (path === '/empty') {
    return (async function* () { yield 'a'; yield ''; yield Buffer.alloc(0); yield 'b'; })();
  }
  if (path === '/fails') {
    return (async function* () { yield 'first'; throw new Error('mid-stream'); })();
  }
  if (path === '/slow') {
    await context.write('x');
    await new Promise((r) => setTimeout(r, 1500));
    await context.write('y');
    return;
  }
  if (path === '/trace') return { trace_id: context.trace_id, traceparent: context.traceparent };
  return { statusCode: 206, headers: { 'content-type': 'text/event-stream' },
           body: (async function* () { yield 'data: 1\\n\\n'; yield { n: 2 }; })() };
};
"""
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@pytest.fixture(scope="module", params=["python3.11", "nodejs20"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    runtime = str(request.param)
    files = {"handler.py": PY} if runtime == "python3.11" else {"handler.js": NODE}
    workdir = tmp_path_factory.mktemp(f"stream-{runtime}")
    srv = start_files(runtime, workdir, files, entrypoint="handler.handle", SLESS_CONCURRENCY="1")
    yield srv
    stop_server(srv)


def _connect(server: Server) -> socket.socket:
    assert server.socket_path is not None
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(30)
    sock.connect(str(server.socket_path))
    return sock


def _read_answer(
    sock: socket.socket, buffered: bytes = b""
) -> tuple[bytes, list[bytes], bytes, bool]:
    """(head, chunks, what followed, ended with the last chunk) of one chunked answer."""
    data = buffered
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise AssertionError(f"no head: {data!r}")
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    chunks: list[bytes] = []
    while True:
        while b"\r\n" not in rest:
            more = sock.recv(65536)
            if not more:
                return head, chunks, rest, False
            rest += more
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        while len(rest) < size + 2:
            more = sock.recv(65536)
            if not more:
                return head, chunks, rest, False
            rest += more
        if size == 0:
            return head, chunks, rest[2:], True
        chunks.append(rest[:size])
        rest = rest[size + 2 :]


def _get(path: str, method: str = "GET", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nhost: w\r\n{extra}\r\n".encode()


def test_a_stream_is_chunked_with_its_status_and_headers(server: Server) -> None:
    with _connect(server) as sock:
        sock.sendall(_get("/sse"))
        head, chunks, after, ended = _read_answer(sock)
        assert head.startswith(b"HTTP/1.1 206")
        assert b"content-type: text/event-stream" in head.lower()
        assert b"transfer-encoding: chunked" in head.lower()
        assert b"content-length" not in head.lower()
        assert ended
        assert chunks == [b"data: 1\n\n", b'{"n":2}\n']
        # the connection serves the next request in step
        sock.sendall(_get("/empty"))
        _, chunks, _, ended = _read_answer(sock, after)
        assert ended
        # empty items were skipped: an empty chunk would have ended the body early
        assert chunks == [b"a", b"b"]


def test_a_failure_mid_stream_cuts_the_answer(server: Server) -> None:
    with _connect(server) as sock:
        sock.sendall(_get("/fails"))
        _, chunks, _, ended = _read_answer(sock)
    assert chunks == [b"first"]
    assert not ended  # no last chunk: the gateway (and its caller) can tell
    assert "mid-stream" in Path(server.log).read_text()


def test_head_of_a_stream_has_no_body(server: Server) -> None:
    with _connect(server) as sock:
        sock.sendall(_get("/sse", "HEAD", "connection: close\r\n"))
        data = b""
        while more := sock.recv(65536):
            data += more
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 206")
    assert body in (b"", b"0\r\n\r\n")


def test_a_stream_holds_the_handlers_slot_until_it_ends(server: Server) -> None:
    """SLESS_CONCURRENCY=1: a second call waits for the stream to end, not only for its
    head (the order the bytes arrive in is what is checked, never a duration)."""
    with _connect(server) as first, _connect(server) as second:
        first.sendall(_get("/slow"))
        received = b""
        while b"\r\n\r\n" not in received:
            received += first.recv(65536)
        second.sendall(_get("/trace"))
        order = []
        open_ = {first, second}
        while open_:
            readable, _, _ = select.select(list(open_), [], [], 30)
            assert readable, "no answer"
            # the stream's last chunk is written before its slot is released: when both
            # are readable at once, the first's bytes were there first
            for sock in sorted(readable, key=lambda s: s is not first):
                data = sock.recv(65536)
                if sock is first:
                    received += data
                    if received.endswith(b"0\r\n\r\n"):
                        order.append("first ended")
                        open_.discard(first)
                else:
                    order.append("second answered")
                    open_.discard(second)
        assert order == ["first ended", "second answered"]
        assert b"1\r\nx\r\n" in received
        assert b"1\r\ny\r\n" in received


def test_the_trace_context_reaches_the_handler(server: Server) -> None:
    with _connect(server) as sock:
        sock.sendall(_get("/trace", extra=f"traceparent: {TRACEPARENT}\r\nconnection: close\r\n"))
        data = b""
        while more := sock.recv(65536):
            data += more
    body = data.partition(b"\r\n\r\n")[2]
    assert b'"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"' in body.replace(b" ", b"")
    assert TRACEPARENT.encode() in body

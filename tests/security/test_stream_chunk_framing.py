"""Attack: chunk framing abuse on a streamed answer, from either side of the gateway.

A function's code runs in the same process as the runtime server, so it can write raw
bytes to the gateway's connection: an answer may have bad chunk sizes, a terminator
followed by a second, smuggled answer, or trailers. Raw sockets script the upstream
(the gateway's HTTP/1.1 client reads it), and a raw socket reads the gateway's own
framing of a stream whose content looks like framing (no client library rewrites it).
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import httpx
import pytest

from sless.backends.http1 import Http1Client, UpstreamBroken
from tests.conftest import RunningGateway
from tests.integration.test_http1 import serving
from tests.support import deploy

pytestmark = pytest.mark.integration

CHUNKED = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
LIMIT = 1 << 20


async def _stream_all(client: Http1Client) -> bytes:
    async with client.stream("GET", "/", [], b"", max_response_bytes=LIMIT) as answer:
        chunks = []
        while chunk := await answer.read():
            chunks.append(chunk)
        return b"".join(chunks)


async def test_a_smuggled_second_answer_after_the_last_chunk_never_reaches_the_next_call(
    tmp_path: Path,
) -> None:
    calls = [0]

    def answer(_request: bytes) -> bytes:
        calls[0] += 1
        if calls[0] == 1:
            # one packet: the stream's end, then an answer to a request not yet sent
            evil = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nEVIL!"
            return CHUNKED + b"5\r\nhello\r\n0\r\n\r\n" + evil
        return b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nreal"

    async with serving(tmp_path, answer) as (server, path):
        client = Http1Client.unix(path)
        assert await _stream_all(client) == b"hello"
        assert await _stream_all(client) == b"real"
        # the connection that talked out of turn was not reused
        assert server.connections == 2
        await client.close()


@pytest.mark.parametrize(
    "body",
    [
        b"zz\r\nhello\r\n0\r\n\r\n",  # not hex
        b"-5\r\nhello\r\n0\r\n\r\n",  # negative
        b"ffffffffffffffffffff\r\n",  # overflows 64 bits
        b"5\r\nhelloXX0\r\n\r\n",  # the chunk's CRLF missing
        b"5\nhello\n0\n\n",  # bare LF
        b"3\r\nabc\r\n5\r\nab",  # ends mid-chunk (the upstream closes)
    ],
    ids=["not-hex", "negative", "overflow", "no-crlf", "bare-lf", "truncated"],
)
async def test_a_malformed_chunk_breaks_the_call_and_the_connection(
    tmp_path: Path, body: bytes
) -> None:
    async with serving(tmp_path, lambda _r: CHUNKED + body + b"CLOSE") as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(UpstreamBroken):
            await _stream_all(client)
        assert client.open_connections == 0
        await client.close()


async def test_a_chunk_larger_than_the_limit_is_cut_at_the_limit(tmp_path: Path) -> None:
    # a chunk announcing 16 MiB: the limit counts what arrives, whatever it announces
    body = b"1000000\r\n" + b"x" * (2 * LIMIT)
    async with serving(tmp_path, lambda _r: CHUNKED + body) as (_server, path):
        client = Http1Client.unix(path)
        got = [0]

        async def read_all() -> None:
            async with client.stream("GET", "/", [], b"", max_response_bytes=LIMIT) as answer:
                while chunk := await answer.read():
                    got[0] += len(chunk)

        with pytest.raises(UpstreamBroken, match="larger than"):
            await read_all()
        assert got[0] <= LIMIT
        await client.close()


FRAMING_LOOKALIKE = {
    "handler.py": (
        "import time\n"
        "def handle(event, context):\n"
        "    yield '0\\r\\n\\r\\n'\n"
        "    yield ''\n"
        "    yield b''\n"
        "    time.sleep(0.5)  # usually the gateway relays the rest as a stream\n"
        "    yield 'HTTP/1.1 200 OK\\r\\ncontent-length: 5\\r\\n\\r\\nEVIL!'\n"
        "    yield '5\\r\\nhello\\r\\n'\n"
    )
}


def _read_response(sock: socket.socket) -> tuple[bytes, bytes, bytes]:
    """One response off a raw socket: its head, its body (de-chunked), what followed."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":")[1])
            while len(rest) < length:
                rest += sock.recv(65536)
            return head, rest[:length], rest[length:]
    assert b"transfer-encoding: chunked" in head.lower()
    body = b""
    while True:
        while b"\r\n" not in rest:
            rest += sock.recv(65536)
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        while len(rest) < size + 2:
            rest += sock.recv(65536)
        if size == 0:
            assert rest[:2] == b"\r\n"
            return head, body, rest[2:]
        body += rest[:size]
        assert rest[size : size + 2] == b"\r\n"
        rest = rest[size + 2 :]


def test_stream_content_that_looks_like_framing_stays_content(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, "sless-acme", "framing", FRAMING_LOOKALIKE)
    port = int(gateway.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        request = b"GET /fn/sless-acme/framing HTTP/1.1\r\nhost: t\r\n\r\n"
        sock.sendall(request)
        head, body, after = _read_response(sock)
        assert head.startswith(b"HTTP/1.1 200")
        # every byte the handler yielded, in order, as one body; empty chunks did not
        # end it early
        assert body == (b"0\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nEVIL!5\r\nhello\r\n")
        assert after == b""
        # the connection serves the next request in step
        sock.sendall(request)
        head, body2, _ = _read_response(sock)
        assert head.startswith(b"HTTP/1.1 200")
        assert body2 == body
    assert httpx.get(f"{gateway.url}/fn/sless-acme/framing", timeout=60).content == body


async def test_the_caller_leaving_mid_chunk_leaves_no_half_answer(tmp_path: Path) -> None:
    """A stream left mid-way is never handed to the next call (its connection closes)."""
    calls = [0]

    def answer(_request: bytes) -> bytes:
        calls[0] += 1
        if calls[0] == 1:
            return CHUNKED + b"5\r\nhello\r\n" + b"a\r\nnext-call"  # more still to come
        return b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nreal"

    async with serving(tmp_path, answer) as (server, path):
        client = Http1Client.unix(path)
        async with client.stream("GET", "/", [], b"", max_response_bytes=LIMIT) as answer_:
            assert await answer_.read() == b"hello"
        assert await asyncio.wait_for(_stream_all(client), 30) == b"real"
        assert server.connections == 2
        await client.close()

"""The invocation path's HTTP/1.1 client against real sockets with scripted answers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import uvloop

from sless.backends.connection import MAX_HEAD_BYTES
from sless.backends.http1 import Http1Client, ResponseTooLarge, UpstreamBroken, encode_request

pytestmark = pytest.mark.integration


Answer = Callable[[bytes], bytes | None]


class ScriptedServer:
    """Reads one request head (+ content-length body) at a time; answers with ``answer``.

    ``answer`` returns the raw bytes to send, or None to close without answering. A
    response may end with the marker ``CLOSE`` to close the connection after sending.
    """

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length) if length else b""
                self.requests.append(head + body)
                out = self.answer(head + body)
                if out is None:
                    return
                close = out.endswith(b"CLOSE")
                writer.write(out.removesuffix(b"CLOSE"))
                await writer.drain()
                if close:
                    return
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, answer: Answer) -> AsyncIterator[tuple[ScriptedServer, str]]:
    server = ScriptedServer(answer)
    path = str(tmp_path / "upstream.sock")
    listener = await asyncio.start_unix_server(server.handle, path)
    try:
        yield server, path
    finally:
        listener.close()
        await listener.wait_closed()


def ok(body: bytes = b"hello", extra: bytes = b"") -> Answer:
    return lambda _request: (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
        + extra
        + f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )


async def test_keep_alive_reuses_one_connection(tmp_path: Path) -> None:
    async with serving(tmp_path, ok()) as (server, path):
        client = Http1Client.unix(path)
        for _ in range(5):
            response = await client.request("GET", "/x", [], b"", max_response_bytes=1024)
            assert response.status == 200
            assert response.body == b"hello"
            assert (b"content-type", b"text/plain") in response.headers
        assert server.connections == 1
        await client.close()


async def test_request_carries_method_target_headers_and_body(tmp_path: Path) -> None:
    async with serving(tmp_path, ok()) as (server, path):
        client = Http1Client.unix(path)
        await client.request(
            "POST", "/a b?q=1 2", [("x-one", "1")], b"payload", max_response_bytes=1024
        )
        await client.close()
    request = server.requests[0]
    assert request.startswith(b"POST /a%20b?q=1%202 HTTP/1.1\r\nhost: worker\r\n")
    assert b"\r\nx-one: 1\r\n" in request
    assert b"\r\ncontent-length: 7\r\n\r\npayload" in request


async def test_chunked_and_close_delimited_bodies(tmp_path: Path) -> None:
    chunked = (
        b"HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"
    )
    async with serving(tmp_path, lambda _r: chunked) as (server, path):
        client = Http1Client.unix(path)
        first = await client.request("GET", "/", [], b"", max_response_bytes=1024)
        second = await client.request("GET", "/", [], b"", max_response_bytes=1024)
        assert (first.status, first.body) == (201, b"abcdefg")
        assert second.body == b"abcdefg"
        assert server.connections == 1
        await client.close()
    until_close = b"HTTP/1.1 200 OK\r\n\r\nto the end" + b"CLOSE"
    async with serving(tmp_path, lambda _r: until_close) as (server, path):
        client = Http1Client.unix(path)
        response = await client.request("GET", "/", [], b"", max_response_bytes=1024)
        assert response.body == b"to the end"
        assert client.open_connections == 0
        await client.close()


async def test_connection_close_is_not_reused(tmp_path: Path) -> None:
    async with serving(tmp_path, ok(extra=b"connection: close\r\n")) as (server, path):
        client = Http1Client.unix(path)
        for _ in range(3):
            assert (await client.request("GET", "/", [], b"", max_response_bytes=64)).status == 200
        assert server.connections == 3
        await client.close()


async def test_too_large_response_fails_and_drops_the_connection(tmp_path: Path) -> None:
    async with serving(tmp_path, ok(b"x" * 5000)) as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(ResponseTooLarge):
            await client.request("GET", "/", [], b"", max_response_bytes=4096)
        assert client.open_connections == 0
        await client.close()


async def test_malformed_answer_and_silent_close_are_broken(tmp_path: Path) -> None:
    async with serving(tmp_path, lambda _r: b"NOT HTTP AT ALL\r\n\r\n") as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(UpstreamBroken, match="malformed"):
            await client.request("GET", "/", [], b"", max_response_bytes=64)
        await client.close()
    async with serving(tmp_path, lambda _r: None) as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(UpstreamBroken, match="closed"):
            await client.request("GET", "/", [], b"", max_response_bytes=64)
        await client.close()


@pytest.mark.parametrize("status", [b"999", b"600", b"099", b"000"])
async def test_a_status_no_server_may_send_is_broken(tmp_path: Path, status: bytes) -> None:
    """A worker is the tenant's: what it writes on its socket is not trusted. A status
    outside 100-599 (llhttp takes any three digits) fails the call whole, awaited or in
    callbacks, before anything could reach the caller (the express path would have had
    no status line to write for it, and hung the caller)."""
    bad = b"HTTP/1.1 " + status + b" X\r\ncontent-length: 2\r\n\r\nhi"
    answers = iter([bad, ok()(b""), bad])
    async with serving(tmp_path, lambda _r: next(answers)) as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(UpstreamBroken, match="malformed response: status"):
            await client.request("GET", "/", [], b"", max_response_bytes=64)
        assert client.open_connections == 0
        await client.request("GET", "/", [], b"", max_response_bytes=64)  # one kept idle
        connection = client.take_idle()
        assert connection is not None
        moved = asyncio.Event()
        request = encode_request("GET", "/", "worker", [], b"")
        connection.begin(request, limit=64, notify=moved.set)
        await asyncio.wait_for(moved.wait(), 10)
        assert isinstance(connection.error, UpstreamBroken)
        assert "malformed response: status" in str(connection.error)
        assert not connection.head_done
        client.give_back(connection, clean=False)
        assert client.open_connections == 0
        await client.close()


@pytest.mark.parametrize("shape", ["many fields", "one long field"])
async def test_an_endless_answer_head_is_broken_not_kept(tmp_path: Path, shape: str) -> None:
    """The answer's size limit counts its body; a worker (the tenant's) could send a head
    without end instead and grow the gateway's memory with it, on every call. Past
    ``MAX_HEAD_BYTES`` the call fails as a broken answer (nginx: "upstream sent too big
    header", 502), and a head under it is served."""
    if shape == "many fields":
        fields = b"".join(b"x-f%d: %s\r\n" % (i, b"v" * 50) for i in range(MAX_HEAD_BYTES // 50))
    else:
        fields = b"x-long: " + b"v" * (MAX_HEAD_BYTES * 2) + b"\r\n"
    huge = b"HTTP/1.1 200 OK\r\n" + fields + b"content-length: 2\r\n\r\nhi"
    fine = (
        b"HTTP/1.1 200 OK\r\nx-a: "
        + b"v" * (MAX_HEAD_BYTES // 2)
        + b"\r\ncontent-length: 2\r\n\r\nhi"
    )
    answers = iter([huge, fine])
    async with serving(tmp_path, lambda _r: next(answers)) as (_server, path):
        client = Http1Client.unix(path)
        with pytest.raises(UpstreamBroken, match="head larger than"):
            await client.request("GET", "/", [], b"", max_response_bytes=64)
        assert client.open_connections == 0
        answer = await client.request("GET", "/", [], b"", max_response_bytes=64)
        assert answer.body == b"hi"
        await client.close()


async def test_no_listener_is_broken(tmp_path: Path) -> None:
    client = Http1Client.unix(str(tmp_path / "nobody.sock"))
    with pytest.raises(UpstreamBroken, match="cannot connect"):
        await client.request("GET", "/", [], b"", max_response_bytes=64)


async def test_head_answer_completes_without_a_body(tmp_path: Path) -> None:
    head = b"HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n"
    async with serving(tmp_path, lambda _r: head) as (_server, path):
        client = Http1Client.unix(path)
        response = await client.request("HEAD", "/", [], b"", max_response_bytes=64)
        assert (response.status, response.body) == (200, b"")
        await client.close()


async def test_interim_100_continue_is_skipped(tmp_path: Path) -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    async with serving(tmp_path, lambda _r: answer) as (_server, path):
        client = Http1Client.unix(path)
        response = await client.request("POST", "/", [], b"x", max_response_bytes=64)
        assert (response.status, response.body) == (200, b"ok")
        await client.close()


async def test_cancelled_call_never_hands_its_answer_to_the_next(tmp_path: Path) -> None:
    calls = 0

    def slow_then_fast(request: bytes) -> bytes | None:
        nonlocal calls
        calls += 1
        return b"" if calls == 1 else ok(b"second")(request)

    async with serving(tmp_path, slow_then_fast) as (server, path):
        client = Http1Client.unix(path)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2):
                await client.request("GET", "/1", [], b"", max_response_bytes=64)
        assert client.open_connections == 0
        response = await client.request("GET", "/2", [], b"", max_response_bytes=64)
        assert response.body == b"second"
        assert server.connections == 2
        await client.close()


async def test_idle_connections_are_dropped_after_idle_s(tmp_path: Path) -> None:
    async with serving(tmp_path, ok()) as (server, path):
        client = Http1Client.unix(path, idle_s=0.05)
        await client.request("GET", "/", [], b"", max_response_bytes=64)
        await asyncio.sleep(0.1)
        await client.request("GET", "/", [], b"", max_response_bytes=64)
        assert server.connections == 2
        await client.close()


async def test_concurrent_calls_use_separate_connections(tmp_path: Path) -> None:
    async with serving(tmp_path, ok()) as (server, path):
        client = Http1Client.unix(path)
        results = await asyncio.gather(
            *(client.request("GET", f"/{i}", [], b"", max_response_bytes=64) for i in range(8))
        )
        assert all(r.body == b"hello" for r in results)
        assert server.connections == 8
        await client.request("GET", "/again", [], b"", max_response_bytes=64)
        assert server.connections == 8
        await client.close()


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("GET", "/x\r\nevil: 1", []),
        ("GET", "/x", [("x-a", "1\r\nevil: 1")]),
        ("GET", "/x", [("x-a\n", "1")]),
        ("GET", "/x", [("x:a", "1")]),
        ("GET", "/x", [("x-a", "1\0")]),
        ("GET /y HTTP/1.1\r\n", "/x", []),
        ("GET", "http://elsewhere/", []),
    ],
)
def test_request_head_cannot_be_split(
    method: str, target: str, headers: list[tuple[str, str]]
) -> None:
    if "\r" in target:
        # a CR/LF in the target is percent-encoded, never sent raw
        encoded = encode_request(method, target, "worker", headers, b"")
        assert encoded.count(b"\r\n") == 4
        assert b"%0D%0A" in encoded
        return
    with pytest.raises(ValueError, match=r"invalid|must start"):
        encode_request(method, target, "worker", headers, b"")


def test_the_gateways_loop_uvloop(tmp_path: Path) -> None:
    """uvloop's transports (the gateway's loop) carry the same exchanges."""

    async def scenario() -> None:
        async with serving(tmp_path, ok()) as (server, path):
            client = Http1Client.unix(path)
            for _ in range(3):
                response = await client.request("POST", "/", [], b"x", max_response_bytes=64)
                assert (response.status, response.body) == (200, b"hello")
            assert server.connections == 1
            await client.close()

    uvloop.run(scenario())

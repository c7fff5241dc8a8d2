"""The request-head bound of the gateway's own listener (sless.gateway.front), driven with
the bytes of one read at a time, as the event loop hands them over.

A head is bounded by its fields and by the bytes read while it is open. A read that
carries the end of one request's body and the start of the next request's head must not
count that body against the next head (a pipelining client would get a false 431)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from sless.gateway.front import MAX_REQUEST_HEAD_BYTES, front_protocol


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def write(self, data: Any) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 80)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def _app(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    size = 0
    while True:
        message = await receive()
        size += len(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = str(size).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _protocol() -> tuple[Any, _Transport]:
    config = Config(app=_app, http=front_protocol(None), log_level="warning")
    config.load()
    protocol = config.http_protocol_class(config=config, server_state=ServerState(), app_state={})
    transport = _Transport()
    protocol.connection_made(transport)
    return protocol, transport


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


#: a POST whose body is larger than a head may be, then the start of the next head
_BODY = 2 * MAX_REQUEST_HEAD_BYTES
_FIRST = b"POST /x HTTP/1.1\r\nHost: s\r\nContent-Length: %d\r\n\r\n" % _BODY + b"b" * _BODY


def _feed_until_refused(protocol: Any, transport: _Transport) -> None:
    """One field's bytes a read at a time: refused within one read past the bound."""
    read = 16 * 1024
    taken = 0
    while not transport.closed:
        protocol.data_received(b"v" * read)
        taken += read
        assert taken <= MAX_REQUEST_HEAD_BYTES + read


@pytest.mark.asyncio
async def test_a_large_body_read_with_the_next_head_start_is_not_counted_against_it() -> None:
    protocol, transport = _protocol()
    # one read: the first request whole, then the start of the second one's head
    protocol.data_received(_FIRST + b"GET /y HTTP/1.1\r\nHo")
    await _settle()
    protocol.data_received(b"st: s\r\n\r\n")
    await _settle()
    answers = bytes(transport.written)
    assert b" 431 " not in answers, answers[:300]
    assert answers.count(b"HTTP/1.1 200") == 2, answers[:300]
    assert answers.endswith(b"\r\n\r\n0"), answers[-100:]
    assert not transport.closed


@pytest.mark.asyncio
async def test_a_head_without_end_is_refused_within_one_read_past_the_bound() -> None:
    protocol, transport = _protocol()
    protocol.data_received(b"GET /x HTTP/1.1\r\nHost: s\r\nX-Long: ")
    _feed_until_refused(protocol, transport)
    assert bytes(transport.written).startswith(b"HTTP/1.1 431 ")


@pytest.mark.asyncio
async def test_a_head_begun_in_a_large_read_is_still_bounded_by_the_reads_after_it() -> None:
    protocol, transport = _protocol()
    protocol.data_received(_FIRST + b"GET /y HTTP/1.1\r\nX-Long: ")
    await _settle()
    _feed_until_refused(protocol, transport)
    assert b"HTTP/1.1 431 " in bytes(transport.written)

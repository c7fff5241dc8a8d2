"""A WebSocket session relayed to a worker: the connection upgraded to ``sless-websocket``.

The gateway speaks RFC 6455 with the caller (its ASGI server frames, masks and checks);
towards the worker (or pod) it opens a connection of its own, asks for an HTTP/1.1
upgrade to ``sless-websocket`` and then exchanges whole messages, each one frame: a kind
byte (1 text, 2 binary, 8 close), a 4-byte big-endian length, the payload. The runtime
servers implement the other end (runtimes/*/server.*, docs/websockets.md). Every read
is bounded by ``limit``: a worker cannot make the gateway buffer more than one message.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

from sless.backends import headers as _headers
from sless.backends.base import Upstream
from sless.backends.http1 import UpstreamBroken, encode_request

__all__ = ["CLOSE", "PROTOCOL", "TEXT", "WorkerSocket", "open_session"]

PROTOCOL = "sless-websocket"
TEXT, BINARY, CLOSE = 1, 2, 8


class MessageTooLarge(UpstreamBroken):
    pass


class WorkerSocket:
    """The worker's end of one session, as whole messages."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def receive(self, limit: int) -> tuple[int, bytes]:
        """The next message as (kind, payload); (CLOSE, code+reason) at its end. Raises
        ``MessageTooLarge`` past ``limit`` bytes, ``UpstreamBroken`` if the worker left."""
        try:
            head = await self._reader.readexactly(5)
            kind, length = head[0], int.from_bytes(head[1:5], "big")
            if kind not in (TEXT, BINARY, CLOSE):
                raise UpstreamBroken("the worker sent a malformed frame")
            if length > limit:
                raise MessageTooLarge(f"the worker sent a message over {limit} bytes")
            return kind, await self._reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError):
            raise UpstreamBroken("the worker closed the session") from None

    async def send(self, kind: int, payload: bytes) -> None:
        try:
            self._writer.write(bytes((kind,)) + len(payload).to_bytes(4, "big") + payload)
            await self._writer.drain()
        except OSError:
            raise UpstreamBroken("the worker closed the session") from None

    def close(self) -> None:
        self._writer.close()


@contextlib.asynccontextmanager
async def open_session(
    upstream: Upstream,
    target: str,
    headers: list[tuple[str, str]],
    *,
    invocation_id: uuid.UUID,
) -> AsyncIterator[WorkerSocket | None]:
    """Ask the worker to upgrade; within the block its socket, or None if it refused (a
    handler that is not ``async def``, a runtime without WebSockets). The connection is
    closed when the block ends: the runtime then stops the handler. The caller bounds
    the whole session in time (``asyncio.timeout``)."""
    forwarded = [
        *_headers.to_function(headers),
        ("x-sless-invocation-id", str(invocation_id)),
        ("connection", "upgrade"),
        ("upgrade", PROTOCOL),
    ]
    request = encode_request("GET", target, upstream.client.host, forwarded, b"")
    reader, writer = await upstream.client.open_stream()
    try:
        writer.write(request)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            raise UpstreamBroken("the worker did not answer the upgrade") from None
        status = head.split(b" ", 2)[1] if head.startswith(b"HTTP/1.1 ") else b""
        yield WorkerSocket(reader, writer) if status == b"101" else None
    finally:
        writer.close()

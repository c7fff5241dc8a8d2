"""A small HTTP/1.1 client for the invocation path: keep-alive connections to one upstream.

Every invocation is one request to a worker (a Unix socket in embedded mode) or a pod
(``host:port`` in Kubernetes mode) that speaks the platform's own runtime server. A
general client (aiohttp) spends most of the gateway's CPU on features this path never
uses: cookies, redirects, proxies, compression, URL objects, multidict headers. This one
writes the request in one ``write`` and parses the answer with ``httptools`` (llhttp, the
parser uvicorn uses) in an ``asyncio.Protocol``.

What it guarantees:

- The request line and headers cannot be split by the caller: a target or header with a
  CR, LF or NUL is refused, and the target is percent-encoded apart from the characters
  RFC 3986 allows in a path and a query.
- A response larger than ``max_response_bytes`` fails the call and closes the connection;
  the bytes counted are those received, whether the answer is read whole (``request``) or
  streamed (``stream``: each chunk as llhttp decodes it, with back-pressure).
- A connection is reused only after a complete response that allows keep-alive, and is
  dropped after ``idle_s`` unused (the runtimes keep idle connections far longer, so the
  client always closes first and never writes to a connection the server is closing).
- A cancelled or failed call closes its connection: a half-read answer never reaches the
  next caller.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import cast
from urllib.parse import quote

from sless.backends.connection import Connection, RawStream, ResponseTooLarge, UpstreamBroken
from sless.sandbox import connect_worker_socket

__all__ = [
    "Connection",
    "Http1Client",
    "RawResponse",
    "RawStream",
    "ResponseTooLarge",
    "UpstreamBroken",
]

#: what may stay as is in a request target (RFC 3986 pchar, "/", "?", and "%" of escapes)
_TARGET_SAFE = "/?:@!$&'()*+,;=-._~%"
#: a character ``quote`` would change: a target without one is sent as it is (the usual
#: case, and ``quote`` costs microseconds on every call)
_TO_QUOTE = re.compile(f"[^A-Za-z0-9{re.escape(_TARGET_SAFE)}]")
#: what could end a header line or field name early: refused, never sent
_BAD_NAME = re.compile(r"[\r\n\0:]")
_BAD_VALUE = re.compile(r"[\r\n\0]")
BAD_NAME_RAW = re.compile(rb"[\r\n\0:]")
BAD_VALUE_RAW = re.compile(rb"[\r\n\0]")


@dataclass(slots=True)
class RawResponse:
    status: int
    #: header names lower-cased, in the order received
    headers: list[tuple[bytes, bytes]]
    body: bytes


def checked_target(method: str, target: str) -> str:
    """``target`` as sent (escaped where it must be); refuses a method or target that
    could split the request line."""
    if not method.isalpha() or not method.isupper():
        raise ValueError("invalid method")
    if not target.startswith("/"):
        raise ValueError("the target must start with /")
    if _TO_QUOTE.search(target):
        target = quote(target, safe=_TARGET_SAFE)
    return target


def encode_request(
    method: str, target: str, host: str, headers: list[tuple[str, str]], body: bytes
) -> bytes:
    """The request head and body as bytes; refuses anything that could split the head."""
    target = checked_target(method, target)
    lines = [f"{method} {target} HTTP/1.1", f"host: {host}"]
    for name, value in headers:
        if not name or _BAD_NAME.search(name) or _BAD_VALUE.search(value):
            raise ValueError(f"invalid header {name[:40]!r}")
        lines.append(f"{name}: {value}")
    lines.append(f"content-length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


class _Exchange:
    """``Http1Client.stream``'s block: a class, not an ``asynccontextmanager`` generator,
    because it is on every call (a generator costs its frames on every resume; issue 32)."""

    __slots__ = ("_client", "_connection", "_head_only", "_limit", "_request")

    def __init__(self, client: Http1Client, request: bytes, *, head_only: bool, limit: int) -> None:
        self._client = client
        self._request = request
        self._head_only = head_only
        self._limit = limit

    async def __aenter__(self) -> RawStream:
        client = self._client
        connection = self._connection = await client._connection()
        try:
            await connection.exchange(self._request, head_only=self._head_only, limit=self._limit)
        except BaseException:
            connection.release()
            client._drop(connection)
            raise
        return RawStream(connection._status, connection._headers, connection)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._client.give_back(self._connection, clean=kind is None)


Connect = Callable[[Callable[[], Connection]], Awaitable[tuple[asyncio.BaseTransport, object]]]


class Http1Client:
    """Keep-alive HTTP/1.1 to one upstream; safe for concurrent calls (one per connection).

    ``connect`` opens a transport with the given protocol factory, e.g.
    ``Http1Client.unix(path)`` or ``Http1Client.tcp(host, port)``.
    """

    def __init__(
        self, connect: Connect, *, host: str, max_idle: int = 64, idle_s: float = 15.0
    ) -> None:
        self._connect = connect
        self.host = host
        self.max_idle = max_idle
        self.idle_s = idle_s
        self._idle: list[Connection] = []
        self._open: set[Connection] = set()
        self._closed = False

    @classmethod
    def unix(cls, path: str, **kwargs: object) -> Http1Client:
        """A worker's socket: the socket bound at ``path``, never where a link there
        points (the worker's directory is the tenant's; ``sless.sandbox.sockets``)."""

        async def connect(
            factory: Callable[[], Connection],
        ) -> tuple[asyncio.BaseTransport, object]:
            sock = await connect_worker_socket(path)
            try:
                return await asyncio.get_running_loop().create_unix_connection(factory, sock=sock)
            except BaseException:
                sock.close()
                raise

        return cls(connect, host="worker", **kwargs)  # type: ignore[arg-type]

    @classmethod
    def tcp(cls, host: str, port: int, **kwargs: object) -> Http1Client:
        async def connect(
            factory: Callable[[], Connection],
        ) -> tuple[asyncio.BaseTransport, object]:
            return await asyncio.get_running_loop().create_connection(factory, host, port)

        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return cls(connect, host=authority, **kwargs)  # type: ignore[arg-type]

    @property
    def open_connections(self) -> int:
        return len(self._open)

    async def _connection(self) -> Connection:
        idle = self.take_idle()
        if idle is not None:
            return idle
        try:
            _, protocol = await self._connect(Connection)
        except OSError as e:
            raise UpstreamBroken(f"cannot connect: {e.strerror or type(e).__name__}") from None
        connection = cast(Connection, protocol)
        self._open.add(connection)
        return connection

    def take_idle(self) -> Connection | None:
        """An idle keep-alive connection, taken at once, or None (no ``await``: the
        express path; ``give_back`` it after the exchange)."""
        if self._closed:
            return None
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed and now - connection.last_used < self.idle_s:
                return connection
            self._drop(connection)
        return None

    def give_back(self, connection: Connection, *, clean: bool) -> None:
        """The exchange on ``connection`` is over: kept for the next one only if it was
        ``clean`` (no error, no early exit), its whole answer read, and keep-alive."""
        connection.release()
        reusable = (
            clean
            and connection.finished
            and connection.keep_alive
            and not connection.closed
            and not self._closed
        )
        if reusable and len(self._idle) < self.max_idle:
            self._idle.append(connection)
            return
        self._drop(connection)

    def _drop(self, connection: Connection) -> None:
        connection.close()
        self._open.discard(connection)

    async def request(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        max_response_bytes: int,
    ) -> RawResponse:
        """One exchange, its body read whole; raises ``UpstreamBroken`` (or ``ValueError``
        for a bad request)."""
        async with self.stream(
            method, target, headers, body, max_response_bytes=max_response_bytes
        ) as answer:
            chunks = []
            while chunk := await answer.read():
                chunks.append(chunk)
            return RawResponse(answer.status, answer.headers, b"".join(chunks))

    def stream(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        max_response_bytes: int,
    ) -> AbstractAsyncContextManager[RawStream]:
        """One exchange whose body is read as it arrives, within the block. The
        connection is reused only if the block read the whole body; leaving early (a
        caller gone, a timeout, an error) closes it, and the upstream sees the close.
        Raises ``ValueError`` at once for a request that cannot be sent (``encode_request``)."""
        if self._closed:
            raise UpstreamBroken("the client is closed")
        request = encode_request(method, target, self.host, headers, body)
        return _Exchange(self, request, head_only=method == "HEAD", limit=max_response_bytes)

    async def open_stream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A new connection of its own (never pooled) as asyncio streams: for a protocol
        the connection is upgraded to (sless.backends.upgrade). Raises ``UpstreamBroken``."""
        if self._closed:
            raise UpstreamBroken("the client is closed")
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=64 * 1024)
        protocol = asyncio.StreamReaderProtocol(reader)
        try:
            transport, _ = await self._connect(lambda: protocol)  # type: ignore[arg-type,return-value]
        except OSError as e:
            raise UpstreamBroken(f"cannot connect: {e.strerror or type(e).__name__}") from None
        return reader, asyncio.StreamWriter(
            cast(asyncio.Transport, transport), protocol, reader, loop
        )

    async def close(self) -> None:
        self._closed = True
        for connection in list(self._open):
            self._drop(connection)
        self._idle.clear()

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
import collections
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import cast
from urllib.parse import quote

import httptools

from sless.sandbox import connect_worker_socket

__all__ = ["Http1Client", "RawResponse", "RawStream", "ResponseTooLarge", "UpstreamBroken"]

#: what may stay as is in a request target (RFC 3986 pchar, "/", "?", and "%" of escapes)
_TARGET_SAFE = "/?:@!$&'()*+,;=-._~%"
#: a character ``quote`` would change: a target without one is sent as it is (the usual
#: case, and ``quote`` costs microseconds on every call)
_TO_QUOTE = re.compile(f"[^A-Za-z0-9{re.escape(_TARGET_SAFE)}]")
#: what could end a header line or field name early: refused, never sent
_BAD_NAME = re.compile(r"[\r\n\0:]")
_BAD_VALUE = re.compile(r"[\r\n\0]")


class UpstreamBroken(Exception):
    """The connection failed or the answer was not HTTP: the call did not complete."""


class ResponseTooLarge(UpstreamBroken):
    pass


@dataclass(slots=True)
class RawResponse:
    status: int
    #: header names lower-cased, in the order received
    headers: list[tuple[bytes, bytes]]
    body: bytes


def encode_request(
    method: str, target: str, host: str, headers: list[tuple[str, str]], body: bytes
) -> bytes:
    """The request head and body as bytes; refuses anything that could split the head."""
    if not method.isalpha() or not method.isupper():
        raise ValueError("invalid method")
    if not target.startswith("/"):
        raise ValueError("the target must start with /")
    if _TO_QUOTE.search(target):
        target = quote(target, safe=_TARGET_SAFE)
    lines = [f"{method} {target} HTTP/1.1", f"host: {host}"]
    for name, value in headers:
        if not name or _BAD_NAME.search(name) or _BAD_VALUE.search(value):
            raise ValueError(f"invalid header {name[:40]!r}")
        lines.append(f"{name}: {value}")
    lines.append(f"content-length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


#: a streamed answer waiting to be read past this many bytes stops the reads from the
#: upstream (``pause_reading``) until it is back under ``_LOW_WATER``: a slow caller holds
#: the upstream's writes in the kernel's socket buffers, never the gateway's memory
_HIGH_WATER = 256 * 1024
_LOW_WATER = 64 * 1024


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one exchange at a time.

    An exchange resolves when the answer's head has arrived (``exchange``); its body is
    then read chunk by chunk as it comes (``read``), with back-pressure on the upstream.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.keep_alive = False
        self.last_used = time.monotonic()
        self._head: asyncio.Future[None] | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._head_only = False
        self._limit = 0
        self._size = 0
        self._status = 0
        self._headers: list[tuple[bytes, bytes]] = []
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._paused = False
        self._readable: asyncio.Future[None] | None = None
        self._error: Exception | None = None
        #: the whole answer has arrived (its body too)
        self.done = False
        self._headers_done = False
        self._framed = False  # content-length or chunked: the body has a known end

    # -- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not subclasses of asyncio.Transport, but behave as one
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._parser is None or self.done or self._error is not None:
            # nothing was asked: a server that talks out of turn is not reused
            self.close()
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(UpstreamBroken("the upstream switched protocols"))
        except httptools.HttpParserError as e:
            self._fail(UpstreamBroken(f"malformed response: {type(e).__name__}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._parser is None or self.done or self._error is not None:
            return
        if self._headers_done and not self._framed:
            # a body delimited by the end of the connection (RFC 9112 6.3, last rule)
            self.keep_alive = False
            self._finish()
        else:
            self._fail(UpstreamBroken("the upstream closed the connection"))

    # -- httptools callbacks
    def on_message_begin(self) -> None:
        if self.done:
            # a second answer to one request (in the packet that ended the first): it
            # answers nothing we sent, and the connection is never reused
            self.keep_alive = False
            self.close()

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or (name == b"transfer-encoding" and b"chunked" in value):
            self._framed = True
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self._status = self._parser.get_status_code()
        if 100 <= self._status < 200:
            return
        if not self._head_only and self._announced() > self._limit:
            # known before a byte of the body: the call fails whole (the caller gets the
            # error naming the limit), never a head followed by a cut body
            self._fail(ResponseTooLarge(f"the response is larger than {self._limit} bytes"))
            return
        self._headers_done = True
        if self._head is not None and not self._head.done():
            self._head.set_result(None)
        if self._head_only:
            # a HEAD answer has no body whatever its content-length says; llhttp cannot
            # be told, so complete here and never reuse the connection
            self._finish()
            self.keep_alive = False

    def _announced(self) -> int:
        """The body's length the head announces (0 when it names none or a bad one)."""
        for name, value in self._headers:
            if name == b"content-length" and value.strip().isdigit():
                return int(value)
        return 0

    def on_body(self, body: bytes) -> None:
        if self.done:
            return
        self._size += len(body)
        if self._size > self._limit:
            self._fail(ResponseTooLarge(f"the response is larger than {self._limit} bytes"))
            return
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        assert self._parser is not None
        if 100 <= self._status < 200:  # an interim answer: the real one follows
            self._headers.clear()
            return
        if self.done:
            return
        self.keep_alive = self._parser.should_keep_alive() and not self.closed
        self._finish()

    # -- exchange
    def _wake(self) -> None:
        if self._readable is not None and not self._readable.done():
            self._readable.set_result(None)

    def _finish(self) -> None:
        self.done = True
        self._wake()

    def _fail(self, error: Exception) -> None:
        self.close()
        if self._error is None and not self.done:
            self._error = error
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
        self._wake()

    async def exchange(self, request: bytes, *, head_only: bool, limit: int) -> None:
        """Send ``request`` and wait for the answer's head (``status``, ``headers``)."""
        if self.transport is None or self.closed or self.transport.is_closing():
            raise UpstreamBroken("the connection is closed")
        self._parser = httptools.HttpResponseParser(self)
        self._head = asyncio.get_running_loop().create_future()
        self._head_only = head_only
        self._limit = limit
        self._size = 0
        self._status = 0
        self._headers = []
        self._chunks.clear()
        self._buffered = 0
        self._error = None
        self.done = False
        self._headers_done = False
        self._framed = False
        self.keep_alive = False
        self.transport.write(request)
        await self._head

    @property
    def finished(self) -> bool:
        """Every chunk of the body has arrived and nothing is left to read."""
        return self.done and not self._chunks

    async def read(self) -> bytes:
        """The next chunk of the body as it arrived; ``b""`` at its end. Raises
        ``UpstreamBroken`` (``ResponseTooLarge``) if the answer failed on the way."""
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self.done:
                return b""
            self._readable = asyncio.get_running_loop().create_future()
            try:
                await self._readable
            finally:
                self._readable = None
        chunk = self._chunks.popleft()
        self._buffered -= len(chunk)
        if self._paused and self._buffered < _LOW_WATER and not self.closed:
            self._paused = False
            assert self.transport is not None
            self.transport.resume_reading()
        return chunk

    def release(self) -> None:
        self._parser = None
        self._head = None
        self.last_used = time.monotonic()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


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
        client, connection = self._client, self._connection
        connection.release()
        reusable = (
            kind is None
            and connection.finished
            and connection.keep_alive
            and not connection.closed
            and not client._closed
        )
        if reusable and len(client._idle) < client.max_idle:
            client._idle.append(connection)
            return
        client._drop(connection)


@dataclass(slots=True)
class RawStream:
    """An answer whose head has arrived; its body is read with ``read`` as it comes."""

    status: int
    #: header names lower-cased, in the order received
    headers: list[tuple[bytes, bytes]]
    _connection: _Connection

    async def read(self) -> bytes:
        """The next chunk (``b""`` at the end of the body)."""
        return await self._connection.read()

    @property
    def finished(self) -> bool:
        """The whole body has been read: ``read`` would answer ``b""`` at once."""
        return self._connection.finished

    @property
    def complete(self) -> bool:
        """The whole body has arrived (some of it may be left to read)."""
        return self._connection.done

    @property
    def ready(self) -> bool:
        """``read`` answers without waiting (a chunk, the end, or the error is here)."""
        connection = self._connection
        return bool(connection._chunks) or connection.done or connection._error is not None


Connect = Callable[[Callable[[], _Connection]], Awaitable[tuple[asyncio.BaseTransport, object]]]


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
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()
        self._closed = False

    @classmethod
    def unix(cls, path: str, **kwargs: object) -> Http1Client:
        """A worker's socket: the socket bound at ``path``, never where a link there
        points (the worker's directory is the tenant's; ``sless.sandbox.sockets``)."""

        async def connect(
            factory: Callable[[], _Connection],
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
            factory: Callable[[], _Connection],
        ) -> tuple[asyncio.BaseTransport, object]:
            return await asyncio.get_running_loop().create_connection(factory, host, port)

        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        return cls(connect, host=authority, **kwargs)  # type: ignore[arg-type]

    @property
    def open_connections(self) -> int:
        return len(self._open)

    async def _connection(self) -> _Connection:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if not connection.closed and now - connection.last_used < self.idle_s:
                return connection
            self._drop(connection)
        try:
            _, protocol = await self._connect(_Connection)
        except OSError as e:
            raise UpstreamBroken(f"cannot connect: {e.strerror or type(e).__name__}") from None
        connection = cast(_Connection, protocol)
        self._open.add(connection)
        return connection

    def _drop(self, connection: _Connection) -> None:
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

"""One keep-alive HTTP/1.1 connection to an upstream, as ``sless.backends.http1`` uses it.

The protocol (``Connection``) parses the answer with ``httptools`` as it arrives and hands
it out two ways: awaited (``exchange``, then ``read`` chunk by chunk, for
``Http1Client.stream``), or in callbacks (``begin``, for the gateway's express path,
``sless.gateway.express``). Both keep the same guarantees, listed in ``http1``.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import httptools

__all__ = ["MAX_HEAD_BYTES", "Connection", "RawStream", "ResponseTooLarge", "UpstreamBroken"]

#: the most an answer's head (status line and fields) may take: the body's limit does
#: not count it, and a worker is the tenant's (nginx: ``proxy_buffer_size``, 4-8 KiB)
MAX_HEAD_BYTES = 64 * 1024


class UpstreamBroken(Exception):
    """The connection failed or the answer was not HTTP: the call did not complete."""


class ResponseTooLarge(UpstreamBroken):
    pass


#: a streamed answer waiting to be read past this many bytes stops the reads from the
#: upstream (``pause_reading``) until it is back under ``_LOW_WATER``: a slow caller holds
#: the upstream's writes in the kernel's socket buffers, never the gateway's memory
_HIGH_WATER = 256 * 1024
_LOW_WATER = 64 * 1024


class _Stop(Exception):
    """Raised in a parser callback to stop the parse of an answer that has failed."""


class Connection(asyncio.Protocol):
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
        #: the head's fields so far, and the bytes read before it was whole
        #: (``MAX_HEAD_BYTES``)
        self._head_bytes = 0
        self._head_read = 0
        #: called when the head has arrived, the answer ended or failed (``begin``)
        self._notify: Callable[[], None] | None = None

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
            return
        except httptools.HttpParserError as e:
            self._fail(UpstreamBroken(f"malformed response: {type(e).__name__}"))
            return
        if not self._headers_done and self._error is None:
            # a field not yet whole is kept by llhttp, unseen by ``on_header``: the reads
            # of a head still open are bounded too (counted after the parse, so a read
            # that ends the head and carries the body is never refused)
            self._head_read += len(data)
            if self._head_read > 2 * MAX_HEAD_BYTES:
                self._head_too_large()

    def _head_too_large(self) -> None:
        self._fail(UpstreamBroken(f"response head larger than {MAX_HEAD_BYTES} bytes"))

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
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEAD_BYTES:
            self._head_too_large()
            raise _Stop  # llhttp stops here (``HttpParserCallbackError``)
        name = name.lower()
        if name == b"content-length" or (name == b"transfer-encoding" and b"chunked" in value):
            self._framed = True
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self._status = self._parser.get_status_code()
        if not 100 <= self._status <= 599:
            # llhttp takes any three digits; a worker is the tenant's, and a status no
            # server may send (RFC 9110 15) has no status line to pass on: the call fails
            self._fail(UpstreamBroken(f"malformed response: status {self._status}"))
            return
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
        elif self._notify is not None:
            self._notify()

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
        if self._notify is not None:
            self._notify()

    def _fail(self, error: Exception) -> None:
        self.close()
        if self._error is None and not self.done:
            self._error = error
        if self._head is not None and not self._head.done():
            self._head.set_exception(error)
        self._wake()
        if self._notify is not None:
            self._notify()

    async def exchange(self, request: bytes, *, head_only: bool, limit: int) -> None:
        """Send ``request`` and wait for the answer's head (``status``, ``headers``)."""
        self._head = asyncio.get_running_loop().create_future()
        self._send(request, head_only=head_only, limit=limit)
        await self._head

    def begin(self, request: bytes, *, limit: int, notify: Callable[[], None]) -> None:
        """Send ``request`` (not a HEAD) and return: ``notify`` is called when the
        answer's head has arrived (``head_done``), when the answer ended (``done``) and
        when it failed (``error``), in the event loop's callbacks: the express path of
        ``sless.gateway.express``, which awaits nothing. Raises ``UpstreamBroken``."""
        self._head = None
        self._send(request, head_only=False, limit=limit)
        self._notify = notify

    def _send(self, request: bytes, *, head_only: bool, limit: int) -> None:
        if self.transport is None or self.closed or self.transport.is_closing():
            raise UpstreamBroken("the connection is closed")
        self._notify = None
        self._parser = httptools.HttpResponseParser(self)
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
        self._head_bytes = self._head_read = 0
        self.keep_alive = False
        self.transport.write(request)

    @property
    def head_done(self) -> bool:
        return self._headers_done

    @property
    def error(self) -> Exception | None:
        """Why the answer failed (None: it has not)."""
        return self._error

    @property
    def status(self) -> int:
        return self._status

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        """The answer's header fields, names lower-cased, as received."""
        return self._headers

    def buffered_whole(self) -> bool:
        """The head announces a body short enough to wait for whole, without pausing the
        reads (``Content-Length``, at most ``_HIGH_WATER``): not a stream."""
        if self._headers_done and not self._framed:
            return False  # delimited by the close: a stream
        for name, value in self._headers:
            if name == b"content-length":
                return value.strip().isdigit() and int(value) <= _HIGH_WATER
        return False

    def take_body(self) -> bytes:
        """The body received so far, taken out (the whole body once ``done``)."""
        body = b"".join(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        return body

    def stream(self) -> RawStream:
        """The answer as ``Http1Client.stream`` hands it out (its head has arrived)."""
        self._notify = None
        return RawStream(self._status, self._headers, self)

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
        self._notify = None
        self.last_used = time.monotonic()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


@dataclass(slots=True)
class RawStream:
    """An answer whose head has arrived; its body is read with ``read`` as it comes."""

    status: int
    #: header names lower-cased, in the order received
    headers: list[tuple[bytes, bytes]]
    _connection: Connection

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

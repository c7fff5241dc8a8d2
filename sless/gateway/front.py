"""The gateway's own HTTP/1.1 listener (``SLESS_GATEWAY_HTTP=express``, and ``httptools``
without its express path).

uvicorn's httptools protocol, with one change: a request to ``/fn/...`` that may take the
express path (``sless.gateway.express``) is held until it has arrived whole, then offered
to it. What the express path does not take goes to the ASGI app as under
``SLESS_GATEWAY_HTTP=httptools``, with the body held so far; so does a request whose body
did not arrive in the same read as its head (the admission's body deadline then watches
the rest, sless.gateway.admission). Everything else is uvicorn's: parsing and its
refusals (llhttp refuses every ambiguous framing, tests/security/test_request_smuggling.py),
keep-alive, pipelining, WebSocket upgrades, the connection limit, graceful shutdown.

A request head is bounded: ``MAX_REQUEST_HEAD_BYTES`` of fields (a field past it stops the
parse: 400), and as much read, after the read the head began in, before the head is whole
(a field that never ends: 431), then the connection is closed. uvicorn keeps a head whole
however long it grows, until the header timeout: megabytes a connection (nginx:
``large_client_header_buffers``, 4 x 8 KiB; hyper under granian refuses past its buffer).

Pipelining keeps answers in order: while an express call is in flight, the requests that
follow on its connection wait in uvicorn's pipeline and go to the ASGI app after it.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import (
    STATUS_LINE,
    HttpToolsProtocol,
    RequestResponseCycle,
)

from sless.gateway import pages
from sless.gateway.express import MAX_BODY_BYTES, Express, Tail

__all__ = ["front_protocol"]

_PREFIX = b"/fn/"
#: the most a request head may take (its fields; and the bytes read before it is whole)
MAX_REQUEST_HEAD_BYTES = 64 * 1024
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\ncontent-length: 32\r\n"
    b"connection: close\r\n\r\nthe request head is too large.\r\n"
)


def front_protocol(express: Express | None) -> type[HttpToolsProtocol]:
    """The protocol class uvicorn runs (``Config(http=...)``), serving through ``express``
    (None: every request goes to the ASGI app)."""

    class Front(FrontProtocol):
        pass

    Front.express = express
    return Front


class FrontProtocol(HttpToolsProtocol):
    express: Express | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the request being held for the express path: its body so far (None: none held)
        self._held: list[bytes] | None = None
        self._keep_alive = True
        self._app: Any = None
        #: an express call of this connection is in flight
        self._express_busy = False
        #: close once the express call in flight has answered (shutdown)
        self._close_after = False
        #: a request head is being read: its fields' bytes, and the bytes read meanwhile
        self._in_head = False
        self._head_began = False
        self._head_bytes = 0
        self._head_read = 0
        #: the express call's request (the next one may be parsed meanwhile)
        self._express_scope: Any = None
        self._express_keep_alive = True

    # -- parsing
    def data_received(self, data: bytes) -> None:
        self._head_began = False
        super().data_received(data)
        if self._in_head and not self._head_began and not self.transport.is_closing():
            # counted after the parse: a read that ends the head is never refused; nor is
            # the read a head began in (it may carry the body before it): the fields'
            # own count bounds it, and the reads after it are counted whole
            self._head_read += len(data)
            if self._head_read > MAX_REQUEST_HEAD_BYTES:
                self._in_head = False
                self._held = None
                self.logger.warning("Request head too large: connection closed.")
                self.transport.write(_TOO_LARGE)
                self.transport.close()
                return
        if self._held is not None:
            if self.transport.is_closing():  # refused by the parser (400)
                self._held = None
                return
            # the head is here, not all of the body: the ASGI path and its body deadline
            self._to_app(more_body=True)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = self._head_began = True
        self._head_bytes = self._head_read = 0

    def on_url(self, url: bytes) -> None:
        self._counted(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._counted(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _counted(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_REQUEST_HEAD_BYTES:
            # stops llhttp: uvicorn answers 400 and closes the connection
            raise HeadTooLarge(f"request head over {MAX_REQUEST_HEAD_BYTES} bytes")

    def on_headers_complete(self) -> None:
        self._in_head = False
        parser = self.parser
        http_version = parser.get_http_version()
        method = parser.get_method()
        self.scope["method"] = method.decode("ascii")
        if http_version != "1.1":
            self.scope["http_version"] = http_version
        if parser.should_upgrade() and self._should_upgrade():
            return
        parsed_url = httptools.parse_url(self.url)
        raw_path = parsed_url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        self.scope["path"] = self.root_path + path
        self.scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        self.scope["query_string"] = parsed_url.query or b""
        limit = self.limit_concurrency
        if limit is not None and (len(self.connections) >= limit or len(self.tasks) >= limit):
            self.logger.warning("Exceeded concurrency limit.")
            self._app = service_unavailable
        else:
            self._app = self.app
        self._keep_alive = http_version != "1.0" and parser.should_keep_alive()
        if (
            self.express is not None
            and self._app is self.app
            and http_version == "1.1"
            and raw_path.startswith(_PREFIX)
            and b"%" not in raw_path
            and not self.root_path
            and not self._express_busy
            and (self.cycle is None or self.cycle.response_complete)
            and _short_body(self.headers)
        ):
            self._held = []
            return
        self._to_app(more_body=True)

    def on_body(self, body: bytes) -> None:
        if self._held is None:
            super().on_body(body)
            return
        self._held.append(body)

    def on_message_complete(self) -> None:
        if self._held is None:
            super().on_message_complete()
            return
        body = b"".join(self._held)
        self._held = None
        assert self.express is not None  # held only for it
        scope = self._express_scope = self.scope
        self._express_keep_alive = self._keep_alive
        self._express_busy = True
        taken = self.express.start(
            self,
            scope["method"],
            scope["path"],
            scope["query_string"],
            self.headers,
            body,
            self.client,
        )
        if not taken:
            self._express_busy = False
            self._held = [body]
            self._to_app(more_body=False)

    def _to_app(self, *, more_body: bool) -> None:
        """The request goes to the ASGI app, as uvicorn's own protocol sends it."""
        held, self._held = self._held, None
        existing = self.cycle
        self.cycle = self._new_cycle(self.scope, self._keep_alive)
        if held:
            self.cycle.body = bytearray(b"".join(held))
        self.cycle.more_body = more_body
        if held or not more_body:
            self.cycle.message_event.set()  # what the app's first receive takes
        if self._express_busy or not (existing is None or existing.response_complete):
            self.flow.pause_reading()  # pipelined: after the answer in flight
            self.pipeline.appendleft((self.cycle, self._app))
        else:
            self._start_asgi_task(self.cycle, self._app)

    def _new_cycle(self, scope: Any, keep_alive: bool) -> RequestResponseCycle:
        return RequestResponseCycle(
            scope=scope,
            transport=self.transport,
            flow=self.flow,
            logger=self.logger,
            access_logger=self.access_logger,
            access_log=self.access_log,
            default_headers=self.server_state.default_headers,
            message_event=asyncio.Event(),
            expect_100_continue=self.expect_100_continue,
            keep_alive=keep_alive,
            on_response=self.on_response_complete,
        )

    # -- the express path's link
    def respond(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self._express_busy = False
        transport = self.transport
        if transport.is_closing():
            return
        parts = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            parts += (name, b": ", value, b"\r\n")
        for name, value in headers:
            parts += (name, b": ", value, b"\r\n")
        close = not self._express_keep_alive or self._close_after
        if close:
            parts.append(b"connection: close\r\n")
        parts += (b"\r\n", body)
        transport.write(b"".join(parts))
        if close:
            transport.close()
            return
        self.on_response_complete()

    def tail(self, app: Tail) -> None:
        self._express_busy = False
        scope = self._express_scope
        keep_alive = self._express_keep_alive and not self._close_after
        cycle = self._new_cycle(scope, keep_alive)
        cycle.more_body = False
        cycle.disconnected = self.transport.is_closing()  # the caller left meanwhile
        if not self.pipeline:
            # the connection's current request (its leaving is told to this cycle); a
            # request queued behind it keeps the place, for its body to reach it
            self.cycle = cycle
        path = scope["path"]

        async def isolated(scope: Any, receive: Any, send: Any) -> None:
            await app(scope, receive, pages.isolated(send, path))

        self._start_asgi_task(cycle, isolated)

    # -- the connection
    def connection_lost(self, exc: Exception | None) -> None:
        self._held = None
        super().connection_lost(exc)

    def shutdown(self) -> None:
        if self._express_busy:
            self._close_after = True  # answered first, then closed
            return
        super().shutdown()


class HeadTooLarge(Exception):
    """A request head past ``MAX_REQUEST_HEAD_BYTES`` (raised in a parser callback)."""


def _short_body(headers: list[tuple[bytes, bytes]]) -> bool:
    """No body, or one of at most ``MAX_BODY_BYTES`` announced by its length."""
    for key, value in headers:
        if key == b"content-length":
            return value.isdigit() and int(value) <= MAX_BODY_BYTES
        if key == b"transfer-encoding":
            return False
    return True

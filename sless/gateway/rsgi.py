"""The gateway's ASGI application served over granian's RSGI interface.

Why: under granian's ASGI interface every ``receive`` and both ``send`` calls of a
request cross into Rust and back through a future; the profile of ``/fn`` under wrk put
about a third of the request path's Python time in those awaits (docs/PERFORMANCE.md).
Over RSGI the request head arrives as one object, the body is read by one iterator, and
the answer goes out in one synchronous ``response_bytes`` call.

What it keeps: nothing of the gateway is rewritten for RSGI. This adapter builds the ASGI
scope from the RSGI one and hands the *same* ASGI application (``Admission`` around
``Gateway``: body deadline, per-client caps, activity for the connection guard, the
smuggling check, the ``/fn`` handler, FastAPI for the rest) pure-Python ``receive`` and
``send`` callables. Every rule keeps its one place; the adapter only moves bytes.

- The body is streamed chunk by chunk as the client sends it (the body deadline and the
  size limit act on each chunk, as before); once it has ended, ``receive`` waits for the
  client to go away and then says ``http.disconnect``.
- The answer is buffered until the application's last body message (no route of the
  gateway streams its answer) and sent in one call, with the application's headers as
  they are (hyper adds no second ``content-length``; ``connection: close`` closes).
- Header values that are not visible ASCII never reach Python under RSGI: granian drops
  the whole field (under ASGI its bytes arrived). No rule is weakened by that: the names
  the platform guards (``Authorization``, ``X-Sless-*``, framing) are filtered by name
  whatever their value, so a dropped field can only be one the function does not get. A
  dropped ``Connection`` field names no hop-by-hop field any more, so a field it named is
  forwarded like any other caller field, which the caller could have sent anyway.

The ASGI lifespan (the platform's start and stop, the connection guard) is run by
``Lifespan`` around the server (RSGI has no lifespan of its own; sless.cli.server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

_ASGI = {"version": "3.0", "spec_version": "2.3"}
_DISCONNECT: Message = {"type": "http.disconnect"}
_INTERNAL = b'{"error":{"code":"internal","message":"internal error"}}'


def _address(text: str | None) -> tuple[str, int] | None:
    """``"1.2.3.4:5678"`` or ``"[::1]:5678"`` as ASGI's ``(host, port)``."""
    if not text:
        return None
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


class RsgiGateway:
    """An RSGI application that runs the ASGI application ``app`` for every request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Nothing: the ASGI lifespan runs around the server (``Lifespan``)."""

    def __rsgi_del__(self, loop: asyncio.AbstractEventLoop) -> None:
        """Nothing: see ``__rsgi_init__``."""

    async def __rsgi__(self, scope: Any, protocol: Any) -> None:
        if scope.proto != "http":  # websockets are off (sless.cli.server)
            return
        headers = scope.headers
        # HTTP/1.1: a request with neither field has no body (RFC 9112 6.3); hyper's
        # framing decides the same, so nothing is read from it
        bodiless = "content-length" not in headers and "transfer-encoding" not in headers
        exchange = _Exchange(protocol, bodiless=bodiless)
        query: str = scope.query_string
        path: str = scope.path
        asgi_scope: dict[str, Any] = {
            "type": "http",
            "asgi": _ASGI,
            "http_version": scope.http_version,
            "method": scope.method,
            "scheme": scope.scheme,
            "path": path,
            "raw_path": path.encode("utf-8"),
            "query_string": query.encode("latin-1"),
            "root_path": "",
            "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
            "client": _address(scope.client),
            "server": _address(scope.server),
            "state": {},
        }
        try:
            await self.app(asgi_scope, exchange.receive, exchange.send)
        finally:
            exchange.finish()


class _Exchange:
    """One request's ``receive`` and ``send`` over an RSGI protocol object."""

    __slots__ = ("_body", "_chunks", "_headers", "_protocol", "_sent", "_status")

    def __init__(self, protocol: Any, *, bodiless: bool) -> None:
        self._protocol = protocol
        #: the request body's iterator; None once it has ended, False: there is none
        self._chunks: Any = False if bodiless else protocol.__aiter__()
        self._status = 0
        self._headers: list[tuple[str, str]] = []
        self._body: list[bytes] = []
        self._sent = False

    async def receive(self) -> Message:
        if self._chunks is False:
            self._chunks = None
            return {"type": "http.request", "body": b"", "more_body": False}
        if self._chunks is not None:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._chunks = None
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.request", "body": chunk, "more_body": True}
        await self._protocol.client_disconnect()
        return _DISCONNECT

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            self._status = message["status"]
            self._headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", ())
            ]
        elif kind == "http.response.body" and not self._sent:
            self._body.append(message.get("body", b""))
            if not message.get("more_body", False):
                self._respond()

    def _respond(self) -> None:
        self._sent = True
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._body = []
        self._protocol.response_bytes(self._status, self._headers, body)

    def finish(self) -> None:
        """Whatever the application left unsaid: what it started, or a 500."""
        if self._sent:
            return
        if self._status:
            self._respond()
            return
        self._sent = True
        self._protocol.response_bytes(
            500,
            [("content-type", "application/json"), ("content-length", str(len(_INTERNAL)))],
            _INTERNAL,
        )


class LifespanFailed(RuntimeError):
    """The ASGI application's start-up failed (its message says why)."""


class Lifespan:
    """The ASGI lifespan protocol of ``app``, driven by the server's start-up code."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._inbox: asyncio.Queue[Message] = asyncio.Queue()
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def startup(self) -> None:
        self._task = asyncio.create_task(self._run(), name="sless-lifespan")
        await self._inbox.put({"type": "lifespan.startup"})
        answer = await self._outbox.get()
        if answer["type"] != "lifespan.startup.complete":
            raise LifespanFailed(str(answer.get("message", "start-up failed")))

    async def shutdown(self) -> None:
        if self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        await self._outbox.get()
        await self._task

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": _ASGI, "state": {}}
        try:
            await self.app(scope, self._inbox.get, self._outbox.put)
        except Exception as e:  # the application said why (startup.failed) or it is here
            await self._outbox.put({"type": "lifespan.startup.failed", "message": repr(e)})

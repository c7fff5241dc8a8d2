"""What a request may hold of the gateway: its body's time, and its client's share.

The ASGI wrapper every server runs the gateway behind (``sless up``; sless.cli.server):

- **Body deadline** (nginx's ``client_body_timeout``, Apache's ``mod_reqtimeout``
  ``body=...,MinRate=...``): a request body must arrive within ``body_timeout_s`` of the
  request head, plus one second per ``body_min_rate_bytes_per_s`` received. A body
  trickled a byte at a time would otherwise hold its connection, its request and the
  handler's memory for as long as the client likes: neither granian (hyper) nor uvicorn
  bounds it. Past the deadline the caller gets 408 and the connection is closed. A
  request that announces no body (neither Content-Length nor Transfer-Encoding: RFC 9112
  6.3 gives it none, under every server here) runs without the deadline's wrapper: the
  ``asyncio.timeout`` of each ``receive`` was most of this layer's cost per call (13 us
  of CPU, 2.5 us without; issue 32).
- **Requests per forwarded client**: behind a reverse proxy in
  ``SLESS_GATEWAY_FORWARDED_ALLOW_IPS`` every connection comes from the proxy, so the
  per-address connection cap (sless.gateway.connections) cannot tell callers apart. A
  trusted peer's requests are counted by the caller its ``X-Forwarded-For`` names
  (sless.gateway.forwarded): past ``max_connections_per_client`` in flight, 503 with
  ``Retry-After``. The proxy itself buffers slow request heads (nginx does), so what
  one caller can hold here is its requests in flight.
- **Activity**: which peer connections have a request in flight and when each last
  finished one, for the connection guard (it never cuts a request in flight, and under
  uvicorn, which has no request-head timeout, it closes connections idle past
  ``header_timeout_s``).

The guard runs as a task of the ASGI lifespan, so it starts and stops with the app under
any server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from sless.gateway.forwarded import forwarded_client
from sless.tasks import cancel_and_wait

log = logging.getLogger("sless.gateway.connections")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]
Peer = tuple[str, int]

#: seconds a refused client is told to wait
RETRY_AFTER_S = 1
#: at most one warning per this many seconds for each kind of refusal
WARN_EVERY_S = 10.0


@dataclass
class Activity:
    """Requests in flight per peer connection, and when each connection last finished one."""

    busy: dict[Peer, int] = field(default_factory=dict)
    finished_at: dict[Peer, float] = field(default_factory=dict)


class RateLimitedWarning:
    """One log line per ``every_s`` at most; the lines skipped meanwhile are counted."""

    def __init__(self, every_s: float = WARN_EVERY_S) -> None:
        self.every_s = every_s
        self._last = -every_s
        self._skipped = 0

    def __call__(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._last < self.every_s:
            self._skipped += 1
            return
        skipped, self._skipped, self._last = self._skipped, 0, now
        suffix = f" ({skipped} similar in the last {self.every_s:.0f} s)" if skipped else ""
        log.warning(message + suffix, *args)


@dataclass(frozen=True)
class AdmissionLimits:
    body_timeout_s: float
    body_min_rate_bytes_per_s: int
    max_per_client: int
    trusted_proxies: frozenset[str]


class Admission:
    """The ASGI app ``app`` behind the limits above; ``guard`` runs during the lifespan."""

    def __init__(
        self,
        app: ASGIApp,
        limits: AdmissionLimits,
        activity: Activity,
        guard: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.app = app
        self.limits = limits
        self.activity = activity
        self.guard = guard
        #: requests in flight per forwarded client (behind a trusted proxy)
        self.forwarded_in_flight: dict[str, int] = {}
        self._warn = RateLimitedWarning()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan" and self.guard is not None:
                await self._with_guard(scope, receive, send, self.guard)
                return
            await self.app(scope, receive, send)
            return
        peer = scope.get("client")
        caller = None
        if peer is not None and peer[0] in self.limits.trusted_proxies:
            forwarded = forwarded_client(peer, scope["headers"], self.limits.trusted_proxies)
            caller = forwarded[0] if forwarded is not None else None
        if caller is not None:
            held = self.forwarded_in_flight.get(caller, 0)
            if held >= self.limits.max_per_client:
                self._warn(
                    "refused a request of forwarded client %s: %d in flight, its cap is %d",
                    caller,
                    held,
                    self.limits.max_per_client,
                )
                await _refuse(send)
                return
            self.forwarded_in_flight[caller] = held + 1
        key = (peer[0], peer[1]) if peer is not None else None
        busy = self.activity.busy
        if key is not None:
            busy[key] = busy.get(key, 0) + 1
        # a request with neither Content-Length nor Transfer-Encoding has no body (RFC
        # 9112 6.3; every server here frames it so): nothing for the deadline to watch
        body = None
        if announces_body(scope["headers"]):
            body = _BodyDeadline(receive, send, self.limits)
        try:
            if body is None:
                await self.app(scope, receive, send)
            else:
                await self.app(scope, body.receive, body.send)
        except BodyTimedOut:
            if body is None or not body.timed_out:
                raise
        finally:
            if key is not None:
                left = busy.pop(key, 1) - 1
                if left > 0:
                    busy[key] = left
                self.activity.finished_at[key] = time.monotonic()
            if caller is not None:
                left = self.forwarded_in_flight.pop(caller, 1) - 1
                if left > 0:
                    self.forwarded_in_flight[caller] = left
        if body is not None and body.timed_out:
            self._warn("closed a connection of %s: its request body was too slow", _name(peer))

    async def _with_guard(
        self,
        scope: MutableMapping[str, Any],
        receive: Receive,
        send: Send,
        guard: Callable[[], Coroutine[Any, Any, None]],
    ) -> None:
        task = asyncio.create_task(guard(), name="sless-connection-guard")
        try:
            await self.app(scope, receive, send)
        finally:
            await cancel_and_wait([task])


class BodyTimedOut(Exception):
    """The request body did not arrive in time (the caller has been answered 408)."""


class _BodyDeadline:
    """``receive`` with the body deadline; ``send`` silenced once the 408 went out."""

    __slots__ = (
        "_receive",
        "_send",
        "complete",
        "deadline",
        "limits",
        "received",
        "started",
        "timed_out",
    )

    def __init__(self, receive: Receive, send: Send, limits: AdmissionLimits) -> None:
        self._receive = receive
        self._send = send
        self.limits = limits
        self.deadline: float | None = None
        self.received = 0
        self.started = False
        self.timed_out = False
        self.complete = False

    async def receive(self) -> Message:
        if self.timed_out:
            return {"type": "http.disconnect"}
        if self.complete:
            # the body has arrived: what is left to receive is the caller leaving, which a
            # streamed answer waits for as long as it lasts (sless.gateway.invoking)
            return await self._receive()
        loop = asyncio.get_running_loop()
        if self.deadline is None:
            self.deadline = loop.time() + self.limits.body_timeout_s
        until = self.deadline + self.received / self.limits.body_min_rate_bytes_per_s
        try:
            async with asyncio.timeout_at(until):
                message = await self._receive()
        except TimeoutError:
            self.timed_out = True
            if not self.started:
                await self._send(_TIMEOUT_START)
                await self._send(_TIMEOUT_BODY)
            raise BodyTimedOut from None
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            self.complete = not message.get("more_body", False)
        return message

    async def send(self, message: Message) -> None:
        if self.timed_out:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)


_BODY_FIELDS = frozenset((b"content-length", b"transfer-encoding"))


def announces_body(headers: list[tuple[bytes, bytes]]) -> bool:
    """The request announces a body: a Content-Length (even 0) or a Transfer-Encoding.

    Without either it has none (RFC 9112 6.3), under every server the gateway runs on.
    """
    return any(key in _BODY_FIELDS for key, _ in headers)


def _name(peer: Any) -> str:
    return str(peer[0]) if peer else "an unknown client"


_TIMEOUT_BODY: Message = {
    "type": "http.response.body",
    "body": b'{"error":{"code":"request_timeout","message":"the request body was too slow"}}',
}
_TIMEOUT_START: Message = {
    "type": "http.response.start",
    "status": 408,
    "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_TIMEOUT_BODY["body"])).encode()),
        (b"connection", b"close"),
    ],
}
_BUSY_BODY = b'{"error":{"code":"too_many_connections","message":"too many connections"}}'


async def _refuse(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(_BUSY_BODY)).encode()),
                (b"retry-after", str(RETRY_AFTER_S).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _BUSY_BODY})

"""WebSocket sessions on ``/fn/{ns}/{name}``, for functions whose spec says ``websocket: true``.

``sless.gateway.invoking`` checks a ``websocket`` scope as it checks an HTTP call (the
function, the token of an ``auth: token`` function, a disabled http trigger, the
tenant's rate and concurrency limits) and hands it here. The session holds a lease on a
worker (or a pod) for as long as it lasts, so it counts against the function's
concurrency and the tenant's concurrent invocations. Its limits: ``idle_s`` without a
message either way, the function's ``timeout_s`` in all (the worker is then stopped, as
for a call that timed out), and ``MAX_MESSAGE_BYTES`` per message either way (close 1009).
The caller's frames are parsed by the ASGI server (RFC 6455: masking, lengths, UTF-8);
the worker gets whole messages over its own connection (sless.backends.upgrade).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol

from starlette.types import Message, Receive, Scope, Send

from sless.backends import Serving, Upstream
from sless.backends.http1 import UpstreamBroken
from sless.backends.upgrade import BINARY, CLOSE, TEXT, MessageTooLarge, WorkerSocket, open_session
from sless.errors import InvocationTimeout, SlessError, UpstreamError
from sless.gateway.platform import Platform
from sless.models import FunctionSpec

__all__ = ["MAX_MESSAGE_BYTES", "NotWebSocket", "refusing", "serve"]

#: the largest message either way; a larger one ends the session with 1009
MAX_MESSAGE_BYTES = 1024 * 1024

#: close codes (RFC 6455 7.4.1)
GOING_AWAY, INTERNAL, TOO_BIG = 1001, 1011, 1009


class NotWebSocket(SlessError):
    """The function does not take WebSockets (``websocket: true`` unset, or its handler)."""

    status = 403
    code = "websocket_not_allowed"


class Session(Protocol):
    """What the session tells the call's record (``sless.gateway.invoking.Call``)."""

    invocation_id: Any
    namespace: str
    name: str
    version: str | None
    status: int
    error: str | None
    responded: bool
    request_bytes: int
    response_bytes: int
    #: the messages of the session each way (None until the upgrade is accepted)
    request_messages: int | None
    response_messages: int | None
    #: counted against the tenant's concurrency limit
    running: bool


def refusing(scope: Scope, send: Send) -> Send:
    """``send`` for a ``websocket`` scope whose upgrade may still be refused: an error
    answer (``http.response.*``) goes out as it is where the server can send one (the
    ASGI ``websocket.http.response`` extension: uvicorn), else as a close before the
    accept, which the server answers with 403 (granian); the record has the error."""
    extended = "websocket.http.response" in (scope.get("extensions") or {})

    async def refuse(message: Message) -> None:
        kind = message["type"]
        if kind.startswith("http.response."):
            if extended:
                await send({**message, "type": "websocket." + kind})
            elif kind == "http.response.start":
                await send({"type": "websocket.close", "code": 1008})
        else:
            await send(message)

    return refuse


class _Tally:
    """The messages relayed each way, and when the last one went (for the idle limit)."""

    __slots__ = ("from_caller", "from_worker", "last")

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.from_caller = 0
        self.from_worker = 0


async def serve(
    platform: Platform,
    call: Session,
    spec: FunctionSpec,
    receive: Receive,
    send: Send,
    target: str,
    headers: list[tuple[str, str]],
) -> None:
    """The session of a checked ``websocket`` scope (sless.gateway.invoking), counted
    against its tenant's concurrency until its lease is back."""
    if not spec.websocket:
        raise NotWebSocket(f"function {call.name!r} does not take WebSockets")
    limits = platform.tenancy.limits
    limits.start_invocation(call.namespace)
    call.running = True

    def ended() -> None:
        if call.running:
            call.running = False
            limits.end_invocation(call.namespace)

    await _serve(
        platform.backend,
        call,
        receive,
        send,
        target=target,
        headers=headers,
        duration_s=spec.timeout_s,
        idle_s=platform.settings.gateway.stream_idle_timeout_s,
        ended=ended,
    )


async def _serve(
    backend: Serving,
    call: Session,
    receive: Receive,
    send: Send,
    *,
    target: str,
    headers: list[tuple[str, str]],
    duration_s: float,
    idle_s: float,
    ended: Callable[[], None],
) -> None:
    """Accept the caller's upgrade once the worker accepted its own, then relay messages
    both ways until either side closes or a limit ends the session. ``ended`` is called
    once the worker's lease is back, before the caller hears the close (it releases the
    tenant's count): a caller that reconnects at once finds its slot free."""
    if (await receive())["type"] != "websocket.connect":
        return
    code: int | None = None
    async with backend.upstream(call.namespace, call.name, call.version) as upstream:
        try:
            # the time limit covers the upgrade too: a busy worker cannot hold it forever
            async with asyncio.timeout(duration_s):
                code = await _session(call, upstream, receive, send, target, headers, idle_s)
        except TimeoutError:
            # a handler that ignores the end of its session must not keep its slot
            upstream.timed_out = True
            if not call.responded:
                raise InvocationTimeout("the function did not take the session in time") from None
            call.error = "timeout"
            code = GOING_AWAY
        except UpstreamBroken as e:
            upstream.failed = True
            if not call.responded:
                raise UpstreamError(f"the function failed: {e}") from None
            call.error = "upstream_error"
            code = INTERNAL
    ended()
    if code is not None:
        # the caller may have left as the function ended the session: nothing to close
        with contextlib.suppress(OSError):
            await send({"type": "websocket.close", "code": code})


async def _session(
    call: Session,
    upstream: Upstream,
    receive: Receive,
    send: Send,
    target: str,
    headers: list[tuple[str, str]],
    idle_s: float,
) -> int | None:
    async with open_session(upstream, target, headers, invocation_id=call.invocation_id) as worker:
        if worker is None:
            raise NotWebSocket("the function's handler does not take WebSockets")
        accepted = [(b"x-sless-invocation-id", str(call.invocation_id).encode())]
        await send({"type": "websocket.accept", "headers": accepted})
        call.responded = True
        call.status = 101
        tally = _Tally()
        try:
            return await _relay(call, tally, worker, receive, send, idle_s)
        finally:
            # whatever ended the session (a limit, a broken worker): the record counts
            # what went through
            call.request_messages = tally.from_caller
            call.response_messages = tally.from_worker


async def _relay(
    call: Session,
    tally: _Tally,
    worker: WorkerSocket,
    receive: Receive,
    send: Send,
    idle_s: float,
) -> int | None:
    """Relay until the session ends: the close code to send the caller (None: it left)."""

    async def from_caller() -> int | None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                await worker.send(CLOSE, int(message.get("code", 1005)).to_bytes(2, "big"))
                return None
            data = message.get("bytes")
            kind = BINARY
            if data is None:
                data, kind = (message.get("text") or "").encode(), TEXT
            if len(data) > MAX_MESSAGE_BYTES:
                call.error = "message_too_large"
                return TOO_BIG
            tally.last = time.monotonic()
            tally.from_caller += 1
            call.request_bytes += len(data)
            await worker.send(kind, data)

    async def from_worker() -> int | None:
        while True:
            try:
                kind, payload = await worker.receive(MAX_MESSAGE_BYTES)
            except MessageTooLarge:
                call.error = "message_too_large"
                return TOO_BIG
            if kind == CLOSE:
                code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1000
                return code if 1000 <= code < 5000 and code not in (1005, 1006) else 1000
            tally.last = time.monotonic()
            tally.from_worker += 1
            call.response_bytes += len(payload)
            text = payload.decode(errors="replace") if kind == TEXT else None
            try:
                if text is not None:
                    await send({"type": "websocket.send", "text": text})
                else:
                    await send({"type": "websocket.send", "bytes": payload})
            except OSError:  # the caller left meanwhile (ASGI: the server's OSError)
                return None

    async def idle() -> int | None:
        # the deadline moves with each message: sleep to it, then look again
        while (left := tally.last + idle_s - time.monotonic()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(left)
        call.error = "idle"
        return GOING_AWAY

    tasks = [asyncio.ensure_future(f()) for f in (from_caller, from_worker, idle)]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        # both sides may have ended in the same turn: the caller left, the worker was told
        # and its connection ended. The caller's side decides, then the worker's: a worker
        # that ends because it was told is no broken function.
        return next(task for task in tasks if task in done).result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

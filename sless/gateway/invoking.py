"""The public invocation path ``/fn/{ns}/{name}[/{path}]``, as a plain ASGI app.

This is the hot path, so it bypasses FastAPI routing and dependency injection: one
in-memory lookup of the serving spec, one leased keep-alive connection to a worker, one
record appended to the invocation writer's queue, one in-memory token bucket check and
concurrency count for the owning tenant (``sless.tenancy.limits``). No database round
trip, except to resolve a token for ``auth: token`` functions (cached for a few seconds).

``X-Sless-Async: true`` or ``Prefer: respond-async`` turns a call into a queued one: the
request is written to the durable queue (``sless.events``) and answered 202 with its
invocation id at once. ``X-Sless-Retries: N`` (an integer, 0 or more) asks for at most
``N + 1`` attempts of a queued call instead of the platform's ``max_attempts`` (never
more: it is capped there).

An ``http`` trigger is what makes a function reachable here. A function without any
http trigger is reachable as it always was; one whose http triggers are all disabled
(``enabled: false``) is refused with 403 ``http_trigger_disabled``, direct and
asynchronous calls alike (the backend keeps that view in memory, in both modes). The
check comes after the token check of an ``auth: token`` function, so an anonymous caller
learns nothing more about such a function than before.

Security: hop-by-hop headers (RFC 9110 7.6.1, including those named in ``Connection``)
and the caller's ``Authorization`` header are never forwarded, nor client-supplied
``X-Sless-*`` headers (they would spoof the invocation id or the deadline).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from sless.backends import CallTrace, Stream, open_call, pick
from sless.errors import NotFound, PayloadTooLarge, SlessError, Unauthorized
from sless.events import QueuedCall
from sless.gateway import websocket
from sless.gateway.admission import announces_body
from sless.gateway.asynchronous import attempts_asked, wants_async
from sless.gateway.deps import bearer_token, client_address
from sless.gateway.errors import error_body, error_headers, infrastructure_error
from sless.gateway.forwarding import forwarded_headers, sent_path, session_headers, target
from sless.gateway.idempotency import REPLAYED_HEADER, key_from_headers, request_fingerprint
from sless.gateway.invocation_ids import new_invocation_id
from sless.gateway.platform import Platform
from sless.gateway.streaming import relay
from sless.models import AuthMode, is_dns1123_label, is_version_name
from sless.store import InvocationRecord

log = logging.getLogger(__name__)

PREFIX = "/fn/"


class HttpTriggerDisabled(SlessError):
    """Every http trigger of the function is disabled: ``/fn/...`` refuses it."""

    status = 403
    code = "http_trigger_disabled"


class Call:
    """What one ``/fn/...`` request has done so far: what its invocation record will say."""

    __slots__ = (
        "error",
        "id_bytes",
        "invocation_id",
        "known",
        "name",
        "namespace",
        "queued",
        "reason",
        "request_bytes",
        "request_messages",
        "responded",
        "response_bytes",
        "response_messages",
        "running",
        "started",
        "started_at",
        "status",
        "subpath",
        "trace",
        "version",
    )

    def __init__(self, path: str) -> None:
        self.started = time.perf_counter()
        self.started_at = datetime.now(UTC)
        self.invocation_id = new_invocation_id()
        #: the id as it is written in a header
        self.id_bytes = str(self.invocation_id).encode()
        parts = path[len(PREFIX) :].split("/", 2)
        self.namespace = parts[0] if parts else ""
        # ``name@v3`` calls version v3 directly (checked with the name, before any lookup)
        name, at, version = (parts[1] if len(parts) > 1 else "").partition("@")
        self.name = name
        #: the version the caller named (``@v3``), then the one the call went to
        self.version: str | None = version if at else None
        self.subpath = "/" + (parts[2] if len(parts) > 2 else "")
        self.request_bytes = 0
        self.response_bytes = 0
        #: the messages of a WebSocket session each way (None: not a session)
        self.request_messages: int | None = None
        self.response_messages: int | None = None
        self.status = 500
        self.error: str | None = None
        #: why the call died, as its caller was told (``sless.models.endings``)
        self.reason: str | None = None
        #: the function exists (only then is the call recorded)
        self.known = False
        #: queued for later: the async path records it when it ends
        self.queued = False
        #: counted against the tenant's concurrency limit
        self.running = False
        #: the response has started: nothing more may be sent
        self.responded = False
        #: the call's W3C trace context (None: tracing is off)
        self.trace: CallTrace | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def record(self) -> InvocationRecord:
        return InvocationRecord.of_call(
            self.invocation_id,
            self.namespace,
            self.name,
            status=self.status,
            duration_ms=(time.perf_counter() - self.started) * 1000,
            request_bytes=self.request_bytes,
            response_bytes=self.response_bytes,
            started_at=self.started_at,
            error=self.error,
            version=self.version,
            reason=self.reason,
            request_messages=self.request_messages,
            response_messages=self.response_messages,
        )

    async def send_json(
        self,
        send: Send,
        status: int,
        body: dict[str, Any],
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        payload = json.dumps(body).encode()
        self.responded = True
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"x-sless-invocation-id", str(self.invocation_id).encode()),
                    *(headers or []),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
        self.status = status
        self.response_bytes = len(payload)

    async def answer_failure(self, send: Send, error: Exception) -> None:
        """The caller's answer to ``error``: a platform error in its own status and words;
        anything else logged, and 500 with the id to quote, never a traceback."""
        if isinstance(error, SlessError):
            headers = error_headers(error)
            await self.send_error(
                send, error.status, error.code, error.message, headers, error.details
            )
            return
        log.error(
            "invocation %s of %s/%s failed: %s",
            self.invocation_id,
            self.namespace,
            self.name,
            type(error).__name__,
            exc_info=error,
        )
        await self.send_error(send, 500, "internal", "internal error", None)

    async def send_error(
        self,
        send: Send,
        status: int,
        code: str,
        message: str,
        headers: Any,
        details: Any = None,
    ) -> None:
        self.error = code
        reason = details.get("reason") if isinstance(details, dict) else None
        self.reason = reason if isinstance(reason, str) else None
        if self.responded:  # too late for a JSON error: the caller sees a cut response
            self.status = status
            return
        body = error_body(code, message, details)
        body["error"]["invocation_id"] = str(self.invocation_id)
        extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        await self.send_json(send, status, body, extra)


class InvokeApp:
    def __init__(self, get_platform: Any) -> None:
        self._get_platform = get_platform

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        platform: Platform = self._get_platform()
        call = Call(sent_path(scope))
        call.trace = platform.tracing.begin(scope["headers"])
        if scope["type"] == "websocket":  # an error refuses the upgrade
            send = websocket.refusing(scope, send)
        try:
            await self._serve(platform, call, scope, receive, send)
        except Exception as e:
            await call.answer_failure(send, e)
        finally:
            if call.running:
                platform.tenancy.limits.end_invocation(call.namespace)
            if call.known and not call.queued:
                recording = time.time_ns()
                platform.recorder.record(call.record())
                if call.trace is not None:
                    call.trace.mark("sless.record", recording)
            if call.known:
                platform.metrics.record(call.namespace, call.name, call.status, call.elapsed())
                if call.trace is not None and call.trace.recording:
                    platform.tracing.end(call.trace, span_attributes(call, scope))

    async def _serve(
        self, platform: Platform, call: Call, scope: Scope, receive: Receive, send: Send
    ) -> None:
        namespace, name = call.namespace, call.name
        if not (is_dns1123_label(namespace) and is_dns1123_label(name)):
            raise NotFound("function not found")
        if call.version is not None and not is_version_name(call.version):
            raise NotFound("function not found")
        routing = time.time_ns()
        spec = platform.backend.serving(namespace, name)
        call.known = True
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        pinned = call.version is not None
        if spec.auth is AuthMode.TOKEN:
            await self._authorize(platform, call, scope, headers, namespace)
        # the version is drawn here (or named): its own spec sets the timeout, and a
        # version that needs a token gets one even when the current one is public
        version_spec, call.version = pick(platform.backend, namespace, name, spec, call.version)
        if version_spec.auth is AuthMode.TOKEN and spec.auth is not AuthMode.TOKEN:
            await self._authorize(platform, call, scope, headers, namespace)
        spec = version_spec
        if platform.backend.http_disabled(namespace, name):
            raise HttpTriggerDisabled(
                f"function {name!r} is not reachable over http: its http trigger is disabled"
            )
        if call.trace is not None:
            call.trace.mark("sless.route", routing)
        # limits are per owning tenant (its namespace): anonymous callers of a public
        # function count against the function's owner
        limits = platform.tenancy.limits
        limits.check_invoke(namespace)
        if scope["type"] == "websocket":  # docs/websockets.md
            path = target(scope, call.subpath)
            forwarded = session_headers(scope, headers, call.trace)
            await websocket.serve(platform, call, spec, receive, send, path, forwarded)
            return
        body = await self._read_body(
            scope, receive, platform.settings.gateway.max_invoke_body_bytes
        )
        call.request_bytes = len(body)
        if wants_async(headers):
            await self._enqueue(platform, call, scope, send, headers, body, pinned=pinned)
            return
        limits.start_invocation(namespace)
        call.running = True
        await self._forward(platform, call, scope, receive, send, headers, body, spec.timeout_s)

    async def _enqueue(
        self,
        platform: Platform,
        call: Call,
        scope: Scope,
        send: Send,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        *,
        pinned: bool,
    ) -> None:
        """Queue the call (``Prefer: respond-async``) and answer 202 with its invocation id."""
        namespace, name = call.namespace, call.name
        max_attempts = attempts_asked(headers)
        # a named version runs when the call is taken; else one is drawn then
        queued_version = call.version if pinned else None
        call.version = queued_version
        # the queued call records the invocation when it ends, under this id
        path = target(scope, call.subpath)
        trace = call.trace
        forwarded = forwarded_headers(scope, headers, trace)

        async def enqueue() -> tuple[int, Any]:
            quota = await platform.tenancy.quotas.of(namespace)
            queued = QueuedCall(
                id=call.invocation_id,
                namespace=namespace,
                function=name,
                method=scope["method"],
                path=path,
                headers=forwarded,
                body=body,
                version=queued_version,
                max_attempts=max_attempts,
                # its attempts are children of the ``sless.enqueue`` span
                traceparent=trace.traceparent if trace is not None else None,
            )
            await platform.events.enqueue(queued, max_pending=quota.limit("queued_calls"))
            return 202, {"invocation_id": str(call.invocation_id)}

        # -- Idempotency-Key (sless.gateway.idempotency): a retry with the same key and
        # request gets the first invocation id and queues nothing
        enqueuing = time.time_ns()
        try:
            status, reply, replayed = await platform.idempotency.run(
                namespace,
                "invoke_async",
                key_from_headers(headers),
                request_fingerprint(name, scope["method"], path, body),
                enqueue,
            )
        except SlessError:
            raise
        except Exception as e:
            # the queue is in PostgreSQL: away or out of disk is a clear 503/507
            mapped = infrastructure_error(e)
            if mapped is None:
                raise
            raise mapped from e
        finally:
            if trace is not None:
                trace.mark("sless.enqueue", enqueuing)
        call.queued = True
        if replayed:
            call.invocation_id = uuid.UUID(reply["invocation_id"])
        extra = [(REPLAYED_HEADER.lower().encode(), b"true")] if replayed else []
        await call.send_json(send, status, reply, extra)

    async def _authorize(
        self,
        platform: Platform,
        call: Call,
        scope: Scope,
        headers: list[tuple[bytes, bytes]],
        namespace: str,
    ) -> None:
        started = time.time_ns()
        try:
            await self._authenticate(platform, scope, headers, namespace)
        finally:
            if call.trace is not None:
                call.trace.mark("sless.auth", started)

    async def _authenticate(
        self,
        platform: Platform,
        scope: Scope,
        headers: list[tuple[bytes, bytes]],
        namespace: str,
    ) -> None:
        authorization = next(
            (v.decode("latin-1") for k, v in headers if k == b"authorization"), None
        )
        token = bearer_token(authorization)
        if not token:
            raise Unauthorized("this function needs a bearer token")
        address = client_address(scope.get("client"))
        principal = await platform.tenancy.authenticate_from(token, address)
        if principal.namespace != namespace:
            # another tenant's token: the function is not theirs to call
            raise NotFound("function not found")

    async def _read_body(self, scope: Scope, receive: Receive, limit: int) -> bytes:
        headers = scope["headers"]
        if not announces_body(headers):
            # no body (RFC 9112 6.3): the server's empty ``http.request`` need not be
            # awaited, a hand-over to the server and back saved on every GET (issue 32)
            return b""
        for key, value in headers:
            if key == b"content-length" and value.isdigit() and int(value) > limit:
                raise PayloadTooLarge(f"request body larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            message: Message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"request body larger than {limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _forward(
        self,
        platform: Platform,
        call: Call,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeout_s: float,
    ) -> None:
        trace = call.trace
        calling = time.time_ns()
        try:
            await self._call(platform, call, scope, receive, send, headers, body, timeout_s)
        finally:
            if trace is not None:
                trace.mark("sless.call", calling, 0, {"sless.response_bytes": call.response_bytes})

    async def _call(
        self,
        platform: Platform,
        call: Call,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        timeout_s: float,
    ) -> None:
        forwarded = forwarded_headers(scope, headers, call.trace)
        async with open_call(
            platform.backend,
            call.namespace,
            call.name,
            method=scope["method"],
            path=target(scope, call.subpath),
            headers=forwarded,
            body=body,
            invocation_id=call.invocation_id,
            timeout_s=timeout_s,
            idle_s=platform.settings.gateway.stream_idle_timeout_s,
            version=call.version,
            traceparent=call.trace.traceparent if call.trace is not None else None,
        ) as stream:
            if stream.cold:
                _cold_start(platform, call, stream)
            out_headers = stream.headers
            out_headers.append((b"x-sless-invocation-id", str(call.invocation_id).encode()))
            call.status = stream.status
            if not stream.complete:
                await relay(call, stream, scope, receive, send, out_headers)
                return
            # the whole answer is here (the usual case): one body with its length
            chunks = []
            while chunk := await stream.read():
                chunks.append(chunk)
            payload = b"".join(chunks)
            out_headers.append((b"content-length", str(len(payload)).encode()))
            call.responded = True
            await send(
                {"type": "http.response.start", "status": stream.status, "headers": out_headers}
            )
            await send({"type": "http.response.body", "body": payload})
            call.response_bytes = len(payload)


def _cold_start(platform: Platform, call: Call, stream: Stream) -> None:
    """The call waited for a worker (or a pod) started for it: a histogram, a span."""
    leasing, leased = stream.leased
    platform.metrics.record_cold_start(call.namespace, call.name, (leased - leasing) / 1e9)
    if call.trace is not None:
        call.trace.mark("sless.cold_start", leasing, leased)


def span_attributes(call: Call, scope: Scope) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "sless.namespace": call.namespace,
        "sless.function": call.name,
        "sless.invocation_id": str(call.invocation_id),
        "http.request.method": scope.get("method", "GET"),
        "http.response.status_code": call.status,
        "sless.response_bytes": call.response_bytes,
    }
    if call.version:
        attributes["sless.version"] = call.version
    if call.error:
        attributes["error.type"] = call.error
    return attributes

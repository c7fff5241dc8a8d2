"""The express path: a warm, whole ``/fn/`` call served in the event loop's callbacks.

Under ``SLESS_GATEWAY_HTTP=express`` the public listener is sless's own HTTP/1.1 protocol
(``sless.gateway.front``: uvicorn's httptools protocol, subclassed). When a request to
``/fn/...`` has arrived whole, ``Express.start`` decides at once, awaiting nothing,
whether it can serve it here; if it can, no ASGI scope, task or ``await`` is made for it
(issue 32: the hand-over between the server and the ASGI app was most of the gateway's
CPU per call, docs/PERFORMANCE.md). It can when:

- the platform is up;
- the request is plain: no ``Transfer-Encoding``, ``Expect``, ``Service-Worker``, upgrade,
  percent-escape in the path, or asynchronous call (``X-Sless-Async``, ``Prefer``);
- the function serves, its http trigger is not disabled, and an ``auth: token``
  function's caller has a token resolved in the last seconds, of the function's tenant;
- the tenant is within its concurrency and rate limits;
- a worker has room and an idle keep-alive connection (``Serving.lease_now``);
- no trusted proxy names the caller (``X-Forwarded-For``: the ASGI path's rules).

Otherwise nothing has been done and the request goes to the ASGI app, where today's code
decides: every refusal (404, 401, 403, 429...) is the ASGI path's, word for word. Each
decision above is made by the same functions the ASGI path calls (``sless.gateway.
invoking``): the serving spec, ``pick``, the header rule, ``call_headers``, the limits.

Once taken, the call is the ASGI path's call: the same invocation id, header rule both
ways, response isolation (``sless.gateway.pages``), deadline, record, metrics and limit
counts. The answer is relayed from a callback when it is whole and at most 256 KiB (the
usual case). A longer or streamed answer, and every failure (a timeout, a worker that
died, an answer over the limit), are passed to a task that runs the ASGI path's own code
for them (``relay``, ``failure``, ``Call.send_error``) over the same connection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from starlette.types import Receive, Scope, Send

from sless.backends import CallTrace, Held, Stream, failure, pick
from sless.backends import headers as proxy_headers
from sless.backends.calling import TRACE_FIELDS_RAW as _TRACE_FIELDS
from sless.backends.headers import NOT_FROM_CALLER_RAW as _NOT_FROM_CALLER
from sless.backends.headers import NOT_FROM_FUNCTION_RAW as _NOT_FROM_FUNCTION
from sless.backends.http1 import BAD_NAME_RAW as _BAD_NAME_RAW
from sless.backends.http1 import BAD_VALUE_RAW as _BAD_VALUE_RAW
from sless.backends.http1 import checked_target as _checked_target
from sless.errors import SlessError
from sless.gateway.admission import Activity
from sless.gateway.deps import bearer_token, client_address
from sless.gateway.invoking import PREFIX, Call, span_attributes
from sless.gateway.pages import DROPPED, SANDBOX, function_path, scoped_cookie
from sless.gateway.platform import Platform
from sless.gateway.streaming import relay
from sless.models import AuthMode, is_dns1123_label, is_version_name

log = logging.getLogger(__name__)

#: a request body larger than this takes the ASGI path (its body deadline, its stream)
MAX_BODY_BYTES = 64 * 1024
#: request fields that send a call to the ASGI path
_NOT_EXPRESS = frozenset(
    {b"transfer-encoding", b"expect", b"service-worker", b"x-sless-async", b"prefer"}
)
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

Tail = Callable[[Scope, Receive, Send], Coroutine[Any, Any, None]]


class Link(Protocol):
    """What the express path needs of the caller's connection (``sless.gateway.front``)."""

    #: the connection's event loop (``asyncio.get_running_loop`` asks the kernel for the
    #: process id on every call, to notice a fork)
    loop: asyncio.AbstractEventLoop

    def respond(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        """Write the whole answer; the connection takes its next request."""
        ...

    def tail(self, app: Tail) -> None:
        """Finish the answer with ``app``, an ASGI app run for this request (its scope,
        with ``send`` isolated as every ``/fn/`` answer is)."""
        ...


class Express:
    """The express path's view of the gateway: built once per server, used per call."""

    def __init__(
        self, platform: Callable[[], Platform | None], activity: Activity, trusted: frozenset[str]
    ) -> None:
        self._platform = platform
        self._activity = activity
        self._trusted = trusted

    def start(
        self,
        link: Link,
        method: str,
        path: str,
        query: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        client: tuple[str, int] | None,
    ) -> bool:
        """Serve the call and return True, or return False having done nothing."""
        platform = self._platform()
        if platform is None or method not in _METHODS:
            return False
        if len(body) > platform.settings.gateway.max_invoke_body_bytes:
            return False
        if not path.startswith(PREFIX):
            return False
        plain, authorization, named = _plain(headers)
        if not plain or (named and client is not None and client[0] in self._trusted):
            return False
        call = Call(path)
        routing = time.time_ns()
        version = call.version
        namespace, name = call.namespace, call.name
        if not (is_dns1123_label(namespace) and is_dns1123_label(name)):
            return False
        if version is not None and not is_version_name(version):
            return False
        backend = platform.backend
        try:
            spec = backend.serving(namespace, name)
            version_spec, version = pick(backend, namespace, name, spec, version)
        except SlessError:
            return False
        trace = call.trace = platform.tracing.begin(headers)
        if spec.auth is AuthMode.TOKEN or version_spec.auth is AuthMode.TOKEN:
            authorizing = time.time_ns()
            if not _authorized(platform, authorization, client, namespace):
                return False
            if trace is not None:
                trace.mark("sless.auth", authorizing)
        if backend.http_disabled(namespace, name):
            return False
        limits = platform.tenancy.limits
        if limits.concurrency.running(namespace) >= limits.concurrency.limit:
            return False
        held = backend.lease_now(namespace, name, version)
        if held is None:
            return False
        target = call.subpath + ("?" + query.decode("latin-1") if query else "")
        timeout_s = version_spec.timeout_s
        try:
            host = held.upstream.client.host
            request = call_request(
                method, target, host, headers, client, trace, call.id_bytes, timeout_s, body
            )
            limits.check_invoke(namespace)
            limits.start_invocation(namespace)
        except (ValueError, SlessError):
            held.undo()  # the ASGI path refuses it (400, 429), in its words
            return False
        call.known = call.running = True
        call.version = version
        call.request_bytes = len(body)
        if trace is not None:
            trace.mark("sless.route", routing)
        exchange = _Exchange(self, platform, link, call, held, timeout_s, client)
        exchange.begin(request, method, path)
        return True

    def busy(self, client: tuple[str, int] | None) -> None:
        """A call of ``client``'s connection is in flight (the connection guard)."""
        if client is not None:
            busy = self._activity.busy
            busy[client] = busy.get(client, 0) + 1

    def idle(self, client: tuple[str, int] | None, now: float) -> None:
        if client is not None:
            busy = self._activity.busy
            left = busy.pop(client, 1) - 1
            if left > 0:
                busy[client] = left
            self._activity.finished_at[client] = now


def call_request(
    method: str,
    target: str,
    host: str,
    headers: list[tuple[bytes, bytes]],
    client: tuple[str, int] | None,
    trace: CallTrace | None,
    invocation_id: bytes,
    timeout_s: float,
    body: bytes,
) -> bytes:
    """What the ASGI path sends the function (``forwarded_headers``, ``call_headers``, then
    ``encode_request``), made in one pass over the fields as parsed, without decoding them:
    the same bytes, the same refusals (tests/unit/gateway/test_express_headers.py).
    ``call_headers``'s own hop-by-hop filter has nothing left to drop after
    ``from_caller``'s, which drops more; the fields the platform adds (the caller's
    address, the id, the deadline, the trace) are its own, never a caller's bytes."""
    target = _checked_target(method, target)
    parts = [f"{method} {target} HTTP/1.1\r\nhost: {host}\r\n".encode("latin-1")]
    named = proxy_headers.connection_named_raw(headers)
    untraced = trace is not None and trace.caller_context
    for key, value in headers:
        lower = key.lower()
        if lower in _NOT_FROM_CALLER or lower.startswith(b"x-sless-"):
            continue
        if untraced and lower in _TRACE_FIELDS:
            continue
        if named and lower.decode("latin-1").lower().encode("latin-1") in named:
            continue
        if not key or _BAD_NAME_RAW.search(key) or _BAD_VALUE_RAW.search(value):
            raise ValueError(f"invalid header {key[:40].decode('latin-1')!r}")
        parts += (key, b": ", value, b"\r\n")
    if client:
        parts += (b"x-forwarded-for: ", client[0].encode("latin-1"), b"\r\n")
    parts.append(
        b"x-sless-invocation-id: %s\r\nx-sless-deadline: %.3f\r\n"
        % (invocation_id, time.time() + timeout_s)
    )
    if trace is not None:
        parts += (b"traceparent: ", trace.traceparent.encode(), b"\r\n")
    parts += (b"content-length: %d\r\n\r\n" % len(body), body)
    return b"".join(parts)


def answer_headers(
    headers: list[tuple[bytes, bytes]], path: str, invocation_id: bytes, length: int
) -> list[tuple[bytes, bytes]]:
    """What the ASGI path answers of a whole answer's ``headers`` (``from_function``, the
    id and the length, then ``isolated_headers`` for the request's ``path``), in one
    pass over the fields as parsed (tests/unit/gateway/test_express_headers.py)."""
    named = proxy_headers.connection_named_raw(headers)
    kept = []
    for key, value in headers:
        lower = key.lower()
        if lower in _NOT_FROM_FUNCTION or lower in DROPPED or lower.startswith(b"x-sless-"):
            continue
        if named and lower.decode("latin-1").lower().encode("latin-1") in named:
            continue
        if lower == b"set-cookie":
            cookie_path = function_path(path)
            if cookie_path is None:
                continue
            value = scoped_cookie(value, cookie_path)
        kept.append((key, value))
    kept += (
        (b"x-sless-invocation-id", invocation_id),
        (b"content-length", b"%d" % length),
        (b"content-security-policy", SANDBOX),
    )
    return kept


def _plain(headers: list[tuple[bytes, bytes]]) -> tuple[bool, bytes | None, bool]:
    """Whether no field sends the request to the ASGI path, its ``Authorization``, and
    whether it has an ``X-Forwarded-For`` (from a trusted proxy, it names the caller)."""
    authorization = None
    named = False
    for key, value in headers:
        if key in _NOT_EXPRESS:
            return False, None, False
        if key == b"authorization":
            authorization = value
        elif key == b"x-forwarded-for":
            named = True
    return True, authorization, named


def _authorized(
    platform: Platform,
    authorization: bytes | None,
    client: tuple[str, int] | None,
    namespace: str,
) -> bool:
    """The caller's token was resolved moments ago, and is one of ``namespace``'s tenant."""
    token = bearer_token(authorization.decode("latin-1") if authorization is not None else None)
    if not token:
        return False
    principal = platform.tenancy.authenticated_now(token, client_address(client))
    return principal is not None and principal.namespace == namespace


class _Exchange:
    """One express call from the request sent to its record: callbacks of the worker's
    connection and of the deadline's timer."""

    __slots__ = (
        "_calling",
        "_client",
        "_ends",
        "_express",
        "_held",
        "_link",
        "_method",
        "_path",
        "_platform",
        "_settled",
        "_timeout_s",
        "_timer",
        "call",
    )

    def __init__(
        self,
        express: Express,
        platform: Platform,
        link: Link,
        call: Call,
        held: Held,
        timeout_s: float,
        client: tuple[str, int] | None,
    ) -> None:
        self._express = express
        self._platform = platform
        self._link = link
        self.call = call
        self._held = held
        self._timeout_s = timeout_s
        self._client = client
        self._timer: asyncio.TimerHandle | None = None
        #: the answer is being relayed, or the failure answered: later news is not ours
        self._settled = False
        self._path = ""
        self._ends = 0.0

    def begin(self, request: bytes, method: str, path: str) -> None:
        """Send ``request`` (the caller's ``method`` on ``path``) within the call's time."""
        self._calling = time.time_ns()
        self._method = method
        self._path = path
        self._ends = time.monotonic() + self._timeout_s
        self._express.busy(self._client)
        self._timer = self._link.loop.call_later(self._timeout_s, self._timed_out)
        limit = self._platform.backend.max_response_bytes
        try:
            self._held.connection.begin(request, limit=limit, notify=self._answered)
        except Exception as e:  # the connection was closed under us: the ASGI path's error
            self._fail(e)

    def _answered(self) -> None:
        """The worker's connection moved: its head came, its answer ended or failed."""
        connection = self._held.connection
        if self._settled:
            return
        try:
            if connection.error is not None:
                self._fail(connection.error)
            elif connection.done:
                self._whole()
            elif connection.head_done and not connection.buffered_whole():
                self._stream()
        except Exception as e:
            # a defect here must neither hang the caller nor keep the call's counts: the
            # failure's task answers 500 (unless the answer went out) and ends the call
            if self.call.responded:
                log.error("invocation %s: %s after its answer", self.call.invocation_id, e)
                return
            self._fail(e)

    def _timed_out(self) -> None:
        self._timer = None
        if not self._settled:
            self._held.connection.close()
            self._fail(TimeoutError())

    def _stop_timer(self) -> None:
        self._settled = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _whole(self) -> None:
        """The whole answer is here: relay it from this callback, then end the call."""
        self._stop_timer()
        call, connection = self.call, self._held.connection
        payload = connection.take_body()
        headers = answer_headers(connection.headers, self._path, call.id_bytes, len(payload))
        call.status = connection.status
        call.responded = True
        call.response_bytes = len(payload)
        self._held.release(clean=True)
        try:
            self._link.respond(call.status, headers, payload)
        finally:
            self._called()
            self._end()

    def _stream(self) -> None:
        """A long or streamed answer: the ASGI path's ``relay`` passes it on."""
        self._stop_timer()
        call, held = self.call, self._held
        stream = Stream(
            held.connection.stream(),
            held.upstream,
            version=call.version,
            invocation_id=call.invocation_id,
            deadline=self._ends,
            timeout_s=self._timeout_s,
            idle_s=self._platform.settings.gateway.stream_idle_timeout_s,
            limit=self._platform.backend.max_response_bytes,
        )

        async def streaming(scope: Scope, receive: Receive, send: Send) -> None:
            out_headers = stream.headers
            out_headers.append((b"x-sless-invocation-id", call.id_bytes))
            call.status = stream.status
            clean = False
            try:
                await relay(call, stream, scope, receive, send, out_headers)
                clean = True
            finally:
                held.release(clean=clean)

        self._tail(streaming)

    def _fail(self, error: BaseException) -> None:
        """The call failed before its answer: the ASGI path's error, from a task."""
        self._stop_timer()
        held, call = self._held, self.call
        settings = (self._timeout_s, self._platform.backend.max_response_bytes)

        async def failing(scope: Scope, receive: Receive, send: Send) -> None:
            # named first: naming a broken connection marks the worker failed, which
            # the release then discards (a timed-out one is killed)
            try:
                mapped = await failure(error, held.upstream, call.invocation_id, *settings)
            finally:
                held.release(clean=False)
            raise mapped

        self._tail(failing)

    def _tail(self, body: Tail) -> None:
        """Run ``body`` as the rest of the call in a task, with the invoke path's errors
        and its ``finally``."""
        call = self.call

        async def tail(scope: Scope, receive: Receive, send: Send) -> None:
            try:
                await body(scope, receive, send)
            except Exception as e:
                await call.answer_failure(send, e)
            finally:
                self._called()
                self._end()

        self._link.tail(tail)

    def _called(self) -> None:
        trace = self.call.trace
        if trace is not None:
            attributes = {"sless.response_bytes": self.call.response_bytes}
            trace.mark("sless.call", self._calling, 0, attributes)

    def _end(self) -> None:
        """The invoke path's ``finally``: the tenant's count, the record, the metrics."""
        call, platform = self.call, self._platform
        platform.tenancy.limits.end_invocation(call.namespace)
        recording = time.time_ns()
        platform.recorder.record(call.record())
        trace = call.trace
        if trace is not None:
            trace.mark("sless.record", recording)
        metrics = platform.metrics
        metrics.record(call.namespace, call.name, call.status, call.elapsed())
        metrics.express_calls.inc()
        if trace is not None and trace.recording:
            attributes = span_attributes(call, {"method": self._method})
            platform.tracing.end(trace, attributes)
        self._express.idle(self._client, time.monotonic())

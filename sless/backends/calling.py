"""One call of a function's serving version: the core of every invocation.

The public ``/fn/...`` path (``sless.gateway.invoking``), cron ticks, job runs and queued
asynchronous calls all go through ``call_function``: lease an upstream from the backend,
send one HTTP request with the invocation id and deadline, read a bounded response. It
lives beside the backends because both modes hand it the same ``Upstream``, and because
``sless.events`` (below the gateway) needs it too. The header rule of both directions is
``sless.backends.headers``.

A call that dies (its worker ended, it timed out, its answer was over the response limit)
raises an error whose message says why, in the words of ``sless.models.endings``, with
the bare reason in ``details["reason"]`` (``reason_of``) for the invocation record; the
same reason is appended to the function's log where the mode keeps one
(``Upstream.note``). Whoever called, the tenant reads the same words.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from sless.backends import headers as _headers
from sless.backends.base import Serving, Upstream
from sless.backends.http1 import RawStream, ResponseTooLarge, UpstreamBroken
from sless.errors import BadRequest, InvocationTimeout, NotFound, SlessError, UpstreamError
from sless.models import FunctionSpec
from sless.models import endings as _endings

log = logging.getLogger(__name__)

#: W3C trace context fields (Trace Context and Baggage): replaced by the platform's own
#: when it traces the call, never passed on from a caller (sless.backends.tracing)
_TRACE_HEADERS = frozenset({"traceparent", "tracestate", "baggage"})


def without_trace_context(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``headers`` without the caller's W3C trace context and baggage."""
    return [(k, v) for k, v in headers if k.lower() not in _TRACE_HEADERS]


TRACE_FIELDS_RAW = frozenset(name.encode() for name in _TRACE_HEADERS)


@dataclass(slots=True)
class Response:
    status: int
    #: response headers without hop-by-hop fields and without ``X-Sless-*``
    headers: list[tuple[bytes, bytes]]
    body: bytes
    #: the version that answered
    version: str | None = None
    #: when the wait for a worker (or a pod) started for this call began and ended
    #: (``time.time_ns``); None: the call found one running
    cold_start: tuple[int, int] | None = None


def route(spec: FunctionSpec, version: str | None = None) -> str | None:
    """The version one call goes to: ``version`` when the caller named one, else a
    weighted draw from the serving spec's traffic split, else its current version."""
    if version is not None:
        return version
    targets = [t for t in spec.traffic if t.percent > 0]
    if not targets:
        return spec.version
    # not a secret: which version serves a call is no security decision
    draw = random.randrange(100)  # noqa: S311
    for target in targets:
        draw -= target.percent
        if draw < 0:
            return target.version
    return targets[-1].version


def pick(
    backend: Serving, namespace: str, name: str, current: FunctionSpec, version: str | None
) -> tuple[FunctionSpec, str | None]:
    """The version one call goes to (``route``) and the spec it runs with (its own
    timeout and auth), given the ``current`` serving spec: looked up once a call."""
    version = route(current, version)
    if version is not None and version != current.version:
        return backend.serving(namespace, name, version), version
    return current, version


def resolve(
    backend: Serving, namespace: str, name: str, version: str | None = None
) -> tuple[FunctionSpec, str | None]:
    """``pick`` from the function's serving spec (``NotFound`` naming the function)."""
    try:
        current = backend.serving(namespace, name)
    except NotFound:
        raise NotFound(f"function {name!r} not found") from None
    return pick(backend, namespace, name, current, version)


async def call_function(
    backend: Serving,
    namespace: str,
    name: str,
    *,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes,
    invocation_id: uuid.UUID,
    timeout_s: float,
    version: str | None = None,
    traceparent: str | None = None,
) -> Response:
    """Send one request to the function and read its whole answer (``open_call``, read
    to the end: a streamed answer is gathered, within the same limits).

    Raises ``InvocationTimeout``, ``UpstreamError`` (both naming why the call died:
    ``reason_of``), ``NotReady`` or ``NotFound``. ``version``: the version to call, as
    ``pick`` chose it (None: one drawn here by the serving spec's traffic split, see
    ``route``). The answer is at most ``backend.max_response_bytes``. ``traceparent``:
    as ``open_call``'s.
    """
    async with open_call(
        backend,
        namespace,
        name,
        method=method,
        path=path,
        headers=headers,
        body=body,
        invocation_id=invocation_id,
        timeout_s=timeout_s,
        version=version,
        traceparent=traceparent,
    ) as stream:
        chunks = []
        while chunk := await stream.read():
            chunks.append(chunk)
        cold = stream.leased if stream.cold else None
        return Response(stream.status, stream.headers, b"".join(chunks), stream.version, cold)


class Stream:
    """A call's answer whose head has arrived: ``read`` its body as the function sends it.

    Each ``read`` waits at most ``idle_s`` and never past the call's deadline (set when the
    call was sent: the time limit covers the whole stream). A read that fails ends the
    call with the error ``call_function`` would raise (its reason noted in the log)."""

    __slots__ = (
        "_deadline",
        "_idle_s",
        "_invocation_id",
        "_limit",
        "_raw",
        "_timeout_s",
        "_upstream",
        "cold",
        "headers",
        "leased",
        "received",
        "status",
        "version",
    )

    def __init__(
        self,
        raw: RawStream,
        upstream: Upstream,
        *,
        version: str | None,
        invocation_id: uuid.UUID,
        deadline: float,
        timeout_s: float,
        idle_s: float,
        limit: int,
        leased: tuple[int, int] = (0, 0),
    ) -> None:
        self.status = raw.status
        #: when the wait for a worker (or a pod) began and ended (``time.time_ns``)
        self.leased = leased
        #: the wait started a worker (or a pod) for this call
        self.cold = upstream.cold
        #: response headers without hop-by-hop fields and without ``X-Sless-*``
        self.headers = _headers.from_function(raw.headers)
        #: the version that answered
        self.version = version
        #: body bytes read so far
        self.received = 0
        self._raw = raw
        self._upstream = upstream
        self._invocation_id = invocation_id
        self._deadline = deadline
        self._timeout_s = timeout_s
        self._idle_s = idle_s
        self._limit = limit

    @property
    def finished(self) -> bool:
        """The whole body has been read."""
        return self._raw.finished

    @property
    def complete(self) -> bool:
        """The whole body has arrived: reading it to the end does not wait."""
        return self._raw.complete

    @property
    def deadline(self) -> float:
        """When the call's time is up (``time.monotonic``): the stream must end by then."""
        return self._deadline

    @property
    def content_length(self) -> bytes | None:
        """The answer's own ``Content-Length`` (llhttp checked its digits), if it had one."""
        for key, value in self._raw.headers:
            if key == b"content-length":
                return value
        return None

    async def read(self) -> bytes:
        """The next chunk as it arrived, ``b""`` at the end of the body."""
        raw, upstream = self._raw, self._upstream
        try:
            if raw.ready:  # already here: no timer to arm (the usual whole answer)
                chunk = await raw.read()
            else:
                left = self._deadline - time.monotonic()
                async with asyncio.timeout(max(0.0, min(left, self._idle_s))):
                    chunk = await raw.read()
        except TimeoutError:
            upstream.timed_out = True
            if time.monotonic() >= self._deadline - 0.001:
                reason = _endings.timed_out(self._timeout_s)
            else:
                reason = f"sent nothing for {self._idle_s:g} s (the worker was stopped)"
            raise _died(InvocationTimeout, upstream, self._invocation_id, reason) from None
        except ResponseTooLarge:
            reason = _endings.response_too_large(self._limit)
            raise _died(UpstreamError, upstream, self._invocation_id, reason) from None
        except UpstreamBroken as e:
            raise await _broken(upstream, self._invocation_id, e) from None
        self.received += len(chunk)
        return chunk


def open_call(
    backend: Serving,
    namespace: str,
    name: str,
    *,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes,
    invocation_id: uuid.UUID,
    timeout_s: float,
    idle_s: float | None = None,
    version: str | None = None,
    traceparent: str | None = None,
) -> AbstractAsyncContextManager[Stream]:
    """Send one request to the function; within the block, its answer (``Stream``).

    The worker (or pod) stays leased until the block ends, so a stream counts against
    the function's concurrency for as long as it lasts. Hop-by-hop fields (and those
    ``Connection`` names) are removed here from what goes out and from what comes back,
    whoever built ``headers``. ``idle_s``: the longest wait for the next chunk (None:
    only the deadline). ``traceparent``: the W3C trace context the function gets (None:
    the caller's passes as it is); the caller's own ``traceparent`` and ``tracestate``
    must then be gone from ``headers`` (``without_trace_context``). Leaving the block
    before the end of the body closes the connection: the runtime server sees it and
    stops the handler. Errors as ``call_function``, whether they happen while the call is
    sent or in the block (a read that timed out, a connection that broke).
    """
    if version is None:
        version = route(backend.serving(namespace, name))
    forwarded = call_headers(headers, invocation_id, timeout_s, traceparent)
    return _OpenCall(
        backend,
        namespace,
        name,
        version,
        method,
        path,
        forwarded,
        body,
        invocation_id,
        timeout_s,
        timeout_s if idle_s is None else idle_s,
    )


def call_headers(
    headers: list[tuple[str, str]],
    invocation_id: uuid.UUID,
    timeout_s: float,
    traceparent: str | None = None,
) -> list[tuple[str, str]]:
    """What a call sends the function: ``headers`` under the hop-by-hop rule, then the
    invocation id, the deadline (``timeout_s`` from now) and the trace context."""
    deadline = time.time() + timeout_s
    forwarded = [
        *_headers.to_function(headers),
        ("x-sless-invocation-id", str(invocation_id)),
        ("x-sless-deadline", f"{deadline:.3f}"),
    ]
    if traceparent is not None:
        forwarded.append(("traceparent", traceparent))
    return forwarded


class _OpenCall:
    """``open_call``'s block: lease an upstream, send the request within the call's time,
    hand out the answer; then give both back, and name every failure the way
    ``call_function`` does. A class, not an ``asynccontextmanager`` generator with an
    ``AsyncExitStack``: it is on every call, and those cost their frames on every resume
    (issue 32)."""

    __slots__ = (
        "_backend",
        "_body",
        "_exchange",
        "_forwarded",
        "_idle_s",
        "_invocation_id",
        "_lease",
        "_method",
        "_name",
        "_namespace",
        "_path",
        "_timeout_s",
        "_upstream",
        "_version",
    )

    def __init__(
        self,
        backend: Serving,
        namespace: str,
        name: str,
        version: str | None,
        method: str,
        path: str,
        forwarded: list[tuple[str, str]],
        body: bytes,
        invocation_id: uuid.UUID,
        timeout_s: float,
        idle_s: float,
    ) -> None:
        self._backend = backend
        self._namespace = namespace
        self._name = name
        self._version = version
        self._method = method
        self._path = path
        self._forwarded = forwarded
        self._body = body
        self._invocation_id = invocation_id
        self._timeout_s = timeout_s
        self._idle_s = idle_s

    async def __aenter__(self) -> Stream:
        backend, timeout_s = self._backend, self._timeout_s
        limit = backend.max_response_bytes
        leasing = time.time_ns()
        self._lease = lease = backend.upstream(self._namespace, self._name, self._version)
        upstream = self._upstream = await lease.__aenter__()
        try:
            leased = (leasing, time.time_ns())
            ends = time.monotonic() + timeout_s
            try:
                async with asyncio.timeout(timeout_s):
                    try:
                        exchange = upstream.client.stream(
                            self._method,
                            self._path,
                            self._forwarded,
                            self._body,
                            max_response_bytes=limit,
                        )
                    except ValueError as e:
                        raise BadRequest(f"the request cannot be forwarded: {e}") from None
                    raw = await exchange.__aenter__()
                    self._exchange = exchange
            except BaseException as error:
                raise await self._failed(error) from None
        except BaseException as error:
            await lease.__aexit__(type(error), error, error.__traceback__)
            raise
        return Stream(
            raw,
            upstream,
            leased=leased,
            version=self._version,
            invocation_id=self._invocation_id,
            deadline=ends,
            timeout_s=timeout_s,
            idle_s=self._idle_s,
            limit=limit,
        )

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            await self._exchange.__aexit__(kind, error, traceback)
            if error is not None:
                mapped = await self._failed(error)
                if mapped is not error:
                    raise mapped from None
        except BaseException as failure:
            await self._lease.__aexit__(type(failure), failure, failure.__traceback__)
            raise
        await self._lease.__aexit__(kind, error, traceback)

    async def _failed(self, error: BaseException) -> BaseException:
        return await failure(
            error,
            self._upstream,
            self._invocation_id,
            self._timeout_s,
            self._backend.max_response_bytes,
        )


async def failure(
    error: BaseException,
    upstream: Upstream,
    invocation_id: uuid.UUID,
    timeout_s: float,
    max_response_bytes: int,
) -> BaseException:
    """What ``error`` is to the caller: a timeout, an answer over the limit or a broken
    connection named as ``call_function`` names them; anything else as it is."""
    if isinstance(error, TimeoutError):
        upstream.timed_out = True
        reason = _endings.timed_out(timeout_s)
        return _died(InvocationTimeout, upstream, invocation_id, reason)
    if isinstance(error, ResponseTooLarge):
        reason = _endings.response_too_large(max_response_bytes)
        return _died(UpstreamError, upstream, invocation_id, reason)
    if isinstance(error, UpstreamBroken):
        return await _broken(upstream, invocation_id, error)
    return error


async def _broken(upstream: Upstream, invocation_id: uuid.UUID, error: Exception) -> SlessError:
    """The error of a call whose connection failed: how the worker ended, if it did."""
    upstream.failed = True
    ending = await upstream.ending() if upstream.ending is not None else None
    reason = _endings.worker_ended(ending)
    log.warning("invocation %s failed: %s (%s)", invocation_id, error, reason)
    return _died(UpstreamError, upstream, invocation_id, reason)


def _died(
    kind: type[SlessError], upstream: Upstream, invocation_id: uuid.UUID, reason: str
) -> SlessError:
    """The error of a call that died for ``reason``, after noting it in the function's log."""
    reason = _endings.bounded(reason)
    if upstream.note is not None:
        try:
            upstream.note(_endings.log_line(reason, invocation_id=invocation_id))
        except OSError as e:  # the caller still learns why; the log is best effort
            log.warning("cannot append to a function's log: %s", e.strerror or e)
    return kind(f"the function failed: {reason}", details={"reason": reason})


def reason_of(error: SlessError) -> str | None:
    """Why a call died, when ``error`` says (``call_function``'s errors do)."""
    details: Any = error.details
    if isinstance(details, dict) and isinstance(details.get("reason"), str):
        return str(details["reason"])
    return None

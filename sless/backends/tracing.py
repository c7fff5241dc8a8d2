"""W3C trace context for every call of a function, and its spans over OTLP when asked.

It lives with the backends because both the gateway (``/fn/...``) and ``sless.events``
(queued calls, cron ticks, job runs) trace the calls they make.

Every call starts a trace, or continues the caller's when it sends a valid
``traceparent`` (W3C Trace Context level 1: ``00-<32 hex>-<16 hex>-<2 hex>``, neither id
all zeros; anything else starts a new trace). The function gets a ``traceparent`` whose
parent is the gateway's ``sless.call`` span, so a handler that calls out continues the
trace (the runtimes give it as ``context.trace_id`` and ``context.traceparent``); the
caller's own ``traceparent`` and ``tracestate`` never reach the function.

On the hot path this is one random id and a few monotonic timestamps (``CallTrace.mark``).
Spans exist only when an exporter is configured (``SLESS_OTEL_EXPORTER_OTLP_ENDPOINT``):
then, when the call has ended, the call's spans are built as the OpenTelemetry SDK's
``ReadableSpan`` with the ids already handed to the function and given to the SDK's span
processor (a ``BatchSpanProcessor`` in front of the OTLP/HTTP exporter). The spans are
``sless.invoke`` (server) with ``sless.auth``, ``sless.route``, ``sless.call`` (client;
the function's spans are its children) holding ``sless.cold_start`` when the call waited
for a worker or a pod to start, and ``sless.record``. A call queued by ``/fn/...``
(``X-Sless-Async``) has ``sless.enqueue`` (producer) instead of ``sless.call``: its
``traceparent`` is stored with the queued call, and each attempt of it is a
``sless.invoke`` (consumer) whose parent is that span, with its own ``sless.call`` (and
``sless.cold_start``). A cron tick or a job run starts a trace of its own
(``Tracing.begin_background``).

**Tenants see only their own spans**: every span carries the owning namespace
(``sless.namespace``) and nothing of another call; a backend that serves tenants filters
on it. A caller can join a call to a trace it names (that is what ``traceparent`` is for),
but learns nothing from it: no span is ever returned to a caller. The caller's
``tracestate`` and ``baggage`` (vendor state and key-values of the caller's own system) are
dropped with its ``traceparent``: the gateway's context replaces them, on every path
(``/fn/...``, WebSocket sessions, queued calls), so nothing a caller put there reaches the
function it calls, which may be another tenant's.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import SpanProcessor

__all__ = ["CallTrace", "Tracing", "parse_traceparent"]

_HEX = frozenset("0123456789abcdef")
_ZERO_TRACE = "0" * 32
_ZERO_SPAN = "0" * 16


def parse_traceparent(value: str) -> tuple[str, str, str] | None:
    """(trace id, parent span id, flags) of a valid version-00 ``traceparent``, else None."""
    if len(value) != 55 or value[:3] != "00-" or value[35] != "-" or value[52] != "-":
        return None
    trace_id, span_id, flags = value[3:35], value[36:52], value[53:55]
    if not (_HEX.issuperset(trace_id) and _HEX.issuperset(span_id) and _HEX.issuperset(flags)):
        return None
    if trace_id == _ZERO_TRACE or span_id == _ZERO_SPAN:
        return None
    return trace_id, span_id, flags


def valid_traceparent(value: object) -> str | None:
    """``value`` (a str, or bytes as an AMQP header may be) when it is a valid
    ``traceparent``, else None."""
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value if isinstance(value, str) and parse_traceparent(value) is not None else None


def _span_id() -> str:
    # not a secret: a span id only has to be unique within its trace (W3C 3.2.2.4)
    return f"{random.getrandbits(64) or 1:016x}"


class CallTrace:
    """One call's place in its trace, and when its steps began and ended."""

    __slots__ = (
        "call_id",
        "caller_context",
        "flags",
        "marks",
        "parent_id",
        "recording",
        "root_id",
        "started",
        "trace_id",
    )

    def __init__(self, headers: list[tuple[bytes, bytes]], *, recording: bool = True) -> None:
        incoming = None
        #: the caller sent trace context of its own (to be replaced, never passed on)
        self.caller_context = False
        for key, value in headers:
            if key == b"traceparent" or key == b"tracestate" or key == b"baggage":
                self.caller_context = True
                if key == b"traceparent" and incoming is None:
                    incoming = parse_traceparent(value.decode("latin-1").strip().lower())
        # one draw for every id: not secrets, only unique within their trace (W3C 3.2.2.4);
        # an all-zero id is invalid, and 2**-64 rare: it is made 1
        ids = f"{random.getrandbits(256):064x}"
        if incoming is None:
            self.trace_id = ids[:32] if ids[:32] != _ZERO_TRACE else "0" * 31 + "1"
            self.parent_id: str | None = None
            self.flags = "01"
        else:
            self.trace_id, self.parent_id, self.flags = incoming
        self.root_id = ids[32:48] if ids[32:48] != _ZERO_SPAN else "0" * 15 + "1"
        #: the ``sless.call`` span: the function's spans are its children
        self.call_id = ids[48:] if ids[48:] != _ZERO_SPAN else "0" * 15 + "2"
        #: spans will be made of the marks (an exporter is set); else ``mark`` does nothing
        self.recording = recording
        self.started = time.time_ns()
        #: (span name, start ns, end ns, attributes)
        self.marks: list[tuple[str, int, int, dict[str, Any]]] = []

    @property
    def traceparent(self) -> str:
        """What the function gets: this trace, with the ``sless.call`` span as parent."""
        return f"00-{self.trace_id}-{self.call_id}-{self.flags}"

    def mark(
        self, name: str, start_ns: int, end_ns: int = 0, attributes: dict[str, Any] | None = None
    ) -> None:
        """A step that began at ``start_ns`` (``time.time_ns``) and ended at ``end_ns``
        (0: now)."""
        if self.recording:
            self.marks.append((name, start_ns, end_ns or time.time_ns(), attributes or {}))


class Tracing:
    """The gateway's tracing: on or off (``SLESS_GATEWAY_TRACING``), and where spans go."""

    def __init__(self, *, enabled: bool, processor: SpanProcessor | None = None) -> None:
        self.enabled = enabled
        #: None: no exporter, no spans (the trace context still reaches the function)
        self.processor = processor

    @classmethod
    def from_settings(cls, enabled: bool, endpoint: str | None, service: str) -> Tracing:
        if not enabled or not endpoint:
            return cls(enabled=enabled)
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        exporter = OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")
        tracing = cls(enabled=True, processor=BatchSpanProcessor(exporter))
        tracing.service = service
        return tracing

    service = "sless-gateway"

    def begin(self, headers: list[tuple[bytes, bytes]]) -> CallTrace | None:
        if not self.enabled:
            return None
        return CallTrace(headers, recording=self.processor is not None)

    def begin_background(self, traceparent: str | None = None) -> CallTrace | None:
        """The trace of a call made without a caller waiting: an attempt of a queued call
        continues ``traceparent`` (stored when it was queued), a cron tick or a job run
        (None) starts a trace of its own."""
        if not self.enabled:
            return None
        headers = [(b"traceparent", traceparent.encode("latin-1"))] if traceparent else []
        return CallTrace(headers, recording=self.processor is not None)

    def end(self, trace: CallTrace, attributes: dict[str, Any], *, kind: str = "server") -> None:
        """The call has ended: its spans to the processor, if there is one. ``kind``: that
        of its ``sless.invoke`` span (``server``, ``consumer`` for an attempt of a queued
        call, ``internal`` for a tick or a run)."""
        if self.processor is None or not trace.recording:
            return
        for span in _spans(trace, attributes, self.service, kind):
            self.processor.on_end(span)

    def shutdown(self) -> None:
        if self.processor is not None:
            self.processor.shutdown()


def _spans(trace: CallTrace, attributes: dict[str, Any], service: str, root_kind: str) -> list[Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    trace_id = int(trace.trace_id, 16)
    flags = TraceFlags(int(trace.flags, 16))

    def context(span_id: str, remote: bool = False) -> SpanContext:
        return SpanContext(trace_id, int(span_id, 16), is_remote=remote, trace_flags=flags)

    resource = Resource.create({"service.name": service})
    owner = {k: v for k, v in attributes.items() if k in ("sless.namespace", "sless.function")}
    root = context(trace.root_id)
    status = int(attributes.get("http.response.status_code", 500))
    spans = [
        ReadableSpan(
            name="sless.invoke",
            context=root,
            parent=context(trace.parent_id, remote=True) if trace.parent_id else None,
            resource=resource,
            attributes=attributes,
            kind=SpanKind[root_kind.upper()],
            start_time=trace.started,
            end_time=time.time_ns(),
            status=Status(StatusCode.ERROR if status >= 500 else StatusCode.UNSET),
        )
    ]
    for name, start, end, extra in trace.marks:
        if name == "sless.call":
            own, parent, kind = context(trace.call_id), root, SpanKind.CLIENT
        elif name == "sless.enqueue":
            # the queued call's attempts are its children (their parent is ``traceparent``)
            own, parent, kind = context(trace.call_id), root, SpanKind.PRODUCER
        elif name == "sless.cold_start":
            own, parent, kind = context(_span_id()), context(trace.call_id), SpanKind.INTERNAL
        else:
            own, parent, kind = context(_span_id()), root, SpanKind.INTERNAL
        spans.append(
            ReadableSpan(
                name=name,
                context=own,
                parent=parent,
                resource=resource,
                attributes={**owner, **extra},
                kind=kind,
                start_time=start,
                end_time=end,
            )
        )
    return spans

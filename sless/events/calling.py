"""Calls made in the background: cron ticks, job runs, queued asynchronous calls.

They send through ``sless.backends.call_function``, as the public ``/fn/...`` path does.
``invoke`` and ``record_outcome`` add what the background paths need: errors as outcomes
instead of exceptions, a bounded result, and an invocation record naming the trigger.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from sless.backends import (
    Serving,
    Tracing,
    call_function,
    reason_of,
    resolve,
    without_trace_context,
)
from sless.errors import SlessError
from sless.store import InvocationRecord, InvocationRecorder

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a background call ended: the function's answer, or the platform's error."""

    status: int
    body: bytes
    content_type: str | None
    started_at: datetime
    duration_ms: float
    request_bytes: int
    #: error code (``timeout``, ``not_ready``...) when the platform answered for the function
    error: str | None = None
    message: str = ""
    #: the function's version that was called (drawn by its traffic split)
    version: str | None = None
    #: why the call died (``sless.models.endings``; also in ``message``); None: it did not
    reason: str | None = None

    @property
    def retryable(self) -> bool:
        """5xx (the function failed, timed out, was not ready) may pass on a retry."""
        return self.status >= 500

    def bounded(self, limit: int) -> tuple[bytes, bool]:
        return self.body[:limit], len(self.body) > limit

    def result_text(self, limit: int) -> str:
        body, truncated = self.bounded(limit)
        text = body.decode("utf-8", "replace")
        return text + "…[truncated]" if truncated else text


def json_request(payload: object, *, trigger: str) -> tuple[list[tuple[str, str]], bytes]:
    """Headers and body of a call made by a trigger or a job: the payload as JSON."""
    headers = [("content-type", "application/json"), ("sless-trigger", trigger)]
    return headers, json.dumps(payload).encode()


async def invoke(
    backend: Serving,
    namespace: str,
    name: str,
    *,
    invocation_id: uuid.UUID,
    method: str = "POST",
    path: str = "/",
    headers: list[tuple[str, str]],
    body: bytes,
    version: str | None = None,
    tracing: Tracing | None = None,
    trigger: str = "",
    traceparent: str | None = None,
    kind: str | None = None,
) -> Outcome:
    """Call the function (``version``: that one, else the one its traffic split draws);
    a failed call is an outcome, never an exception.

    With ``tracing`` the call is traced as ``/fn/...`` calls are: it continues
    ``traceparent`` (the one stored with a queued call) or starts a trace of its own (a
    cron tick, a job run); the function gets the platform's ``traceparent``, never one
    from ``headers``. ``kind``: that of the ``sless.invoke`` span (default: ``consumer``
    with a ``traceparent``, else ``internal``)."""
    trace = tracing.begin_background(traceparent) if tracing is not None else None
    if trace is not None:
        headers = without_trace_context(headers)
    started = time.perf_counter()
    started_at = datetime.now(UTC)
    status, payload, content_type = 500, b"", None
    error: str | None = None
    message, reason, cold_start = "", None, None
    named, version = version, None
    calling = time.time_ns()
    try:
        # drawn (or named) here so that the version's own timeout applies
        spec, version = resolve(backend, namespace, name, named)
        response = await call_function(
            backend,
            namespace,
            name,
            method=method,
            path=path,
            headers=headers,
            body=body,
            invocation_id=invocation_id,
            timeout_s=spec.timeout_s,
            version=version,
            traceparent=trace.traceparent if trace is not None else None,
        )
        status, payload, cold_start = response.status, response.body, response.cold_start
        content_type = next(
            (v.decode("latin-1") for k, v in response.headers if k == b"content-type"), None
        )
    except SlessError as e:
        status, error, message = e.status, e.code, e.message
        reason = reason_of(e)
    except Exception as e:  # a background call must end in an outcome, whatever happened
        log.exception("call of %s/%s failed", namespace, name)
        error, message = "internal", type(e).__name__
    outcome = Outcome(
        status=status,
        body=payload,
        content_type=content_type,
        started_at=started_at,
        duration_ms=(time.perf_counter() - started) * 1000,
        request_bytes=len(body),
        error=error,
        message=message,
        version=version,
        reason=reason,
    )
    if trace is not None and tracing is not None and trace.recording:
        trace.mark("sless.call", calling, 0, {"sless.response_bytes": len(payload)})
        if cold_start is not None:  # as on /fn/...: the wait for a worker started for it
            trace.mark("sless.cold_start", *cold_start)
        attributes = _span_attributes(namespace, name, invocation_id, method, trigger, outcome)
        # an attempt of a queued call consumes what ``sless.enqueue`` produced
        tracing.end(trace, attributes, kind=kind or ("consumer" if traceparent else "internal"))
    return outcome


def _span_attributes(
    namespace: str, name: str, invocation_id: uuid.UUID, method: str, trigger: str, outcome: Outcome
) -> dict[str, object]:
    attributes: dict[str, object] = {
        "sless.namespace": namespace,
        "sless.function": name,
        "sless.invocation_id": str(invocation_id),
        "sless.trigger": trigger,
        "http.request.method": method,
        "http.response.status_code": outcome.status,
        "sless.response_bytes": len(outcome.body),
    }
    if outcome.version:
        attributes["sless.version"] = outcome.version
    if outcome.error:
        attributes["error.type"] = outcome.error
    return attributes


def outcome_record(
    namespace: str,
    name: str,
    invocation_id: uuid.UUID,
    outcome: Outcome,
    *,
    trigger: str,
) -> InvocationRecord:
    """The invocation record of a call made by ``trigger``."""
    return InvocationRecord.of_call(
        invocation_id,
        namespace,
        name,
        status=outcome.status,
        duration_ms=outcome.duration_ms,
        request_bytes=outcome.request_bytes,
        response_bytes=len(outcome.body),
        started_at=outcome.started_at,
        error=outcome.error,
        trigger=trigger,
        version=outcome.version,
        reason=outcome.reason,
    )


def record_outcome(
    recorder: InvocationRecorder,
    namespace: str,
    name: str,
    invocation_id: uuid.UUID,
    outcome: Outcome,
    *,
    trigger: str,
) -> None:
    """Append the invocation record of a call made by ``trigger``."""
    recorder.record(outcome_record(namespace, name, invocation_id, outcome, trigger=trigger))

"""W3C traces across the queue, and of cron ticks and job runs, checked in the spans a real
OTLP/HTTP receiver got (``tests.integration.otlp``).

An asynchronous call continues its caller's trace: the ``/fn/...`` request that queued it
has a ``sless.enqueue`` span, and the attempt the queue's worker makes later is a
``sless.invoke`` (consumer) whose parent is that span; the handler gets a ``traceparent``
of that trace whose parent is the attempt's ``sless.call``. The caller's ``tracestate``
and ``baggage`` are not stored with the queued call and never reach the function. A cron
tick and a job run start a trace of their own.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from sless.backends import parse_traceparent
from tests.conftest import RunningGateway
from tests.integration.events.conftest import sql, wait_for
from tests.integration.otlp import Receiver, attributes, receiver, settings
from tests.support import deploy

__all__ = ["receiver", "settings"]  # fixtures: the gateway exports to the receiver

pytestmark = pytest.mark.integration

NS = "sless-acme"
CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TRACED = {
    "handler.py": (
        "def handle(event, context):\n"
        "    h = event['headers']\n"
        "    print('traceparent', context.traceparent, flush=True)\n"
        "    return {'trace_id': context.trace_id, 'traceparent': context.traceparent,\n"
        "            'header': h.get('traceparent'), 'tracestate': h.get('tracestate'),\n"
        "            'baggage': h.get('baggage')}\n"
    )
}
SPANS_KEPT = ("sless.invoke", "sless.call", "sless.enqueue")


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def _spans(gateway: RunningGateway, receiver: Receiver, trace_id: str, count: int) -> list[Any]:
    """The trace's spans once ``count`` of the kept kinds are there."""
    processor = gateway.app.api.state.platform.tracing.processor  # type: ignore[attr-defined]

    def enough() -> list[Any] | None:
        assert processor.force_flush()
        spans = receiver.all_of_trace(trace_id)
        return spans if sum(s.name in SPANS_KEPT for s in spans) >= count else None

    found: list[Any] = wait_for(enough, f"{count} spans of trace {trace_id}")
    return found


def _one(spans: list[Any], name: str, **wanted: Any) -> Any:
    (span,) = [
        s
        for s in spans
        if s.name == name and all(attributes(s).get(k) == v for k, v in wanted.items())
    ]
    return span


def test_an_async_call_continues_the_callers_trace_across_the_queue(
    gateway: RunningGateway, acme: httpx.Client, receiver: Receiver, database_url: str
) -> None:
    deploy(acme, NS, "traced", TRACED)
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    assert backend.pool(NS, "traced") is None or backend.pool(NS, "traced").size == 0
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/traced",
        headers={
            "X-Sless-Async": "true",
            "traceparent": CALLER,
            "tracestate": "vendor=secret",
            "baggage": "user=alice",
        },
        timeout=60,
    )
    assert response.status_code == 202, response.text
    invocation_id = response.json()["invocation_id"]
    path = f"/v1/namespaces/{NS}/invocations/{invocation_id}"
    done = wait_for(lambda: (s := acme.get(path).json())["state"] == "succeeded" and s, "the call")
    seen = done["result"]
    trace_id = CALLER[3:35]
    # the handler is in the caller's trace, with the gateway's context only
    assert seen["trace_id"] == trace_id
    assert seen["header"] == seen["traceparent"]
    assert (seen["tracestate"], seen["baggage"]) == (None, None)
    stored = sql(database_url, "SELECT headers, traceparent FROM invocation_queue")
    assert "secret" not in str(stored)
    assert "alice" not in str(stored)

    # queued (sless.invoke server, sless.enqueue), then the attempt (sless.invoke, sless.call)
    spans = _spans(gateway, receiver, trace_id, 4)
    queued = _one(spans, "sless.invoke", **{"http.response.status_code": 202})
    enqueue = _one(spans, "sless.enqueue")
    attempt = _one(spans, "sless.invoke", **{"sless.trigger": "async"})
    call = _one(spans, "sless.call")
    assert queued.parent_span_id.hex() == CALLER[36:52]
    assert enqueue.parent_span_id == queued.span_id
    assert attempt.parent_span_id == enqueue.span_id, "the attempt is the enqueue's child"
    assert call.parent_span_id == attempt.span_id
    # the attempt found no worker running: its wait for one is a span, as on /fn/...
    cold = _one(spans, "sless.cold_start")
    assert cold.parent_span_id == call.span_id
    assert attempt.start_time_unix_nano <= cold.start_time_unix_nano
    assert cold.end_time_unix_nano <= call.end_time_unix_nano
    parsed = parse_traceparent(seen["traceparent"])
    assert parsed is not None
    assert parsed[1] == call.span_id.hex(), "the handler's parent is the attempt's call span"
    assert attributes(attempt)["sless.invocation_id"] == invocation_id
    assert attributes(attempt)["http.response.status_code"] == 200
    for span in spans:
        assert attributes(span)["sless.namespace"] == NS


def test_an_async_call_without_a_traceparent_starts_one_the_attempt_continues(
    gateway: RunningGateway, acme: httpx.Client, receiver: Receiver
) -> None:
    deploy(acme, NS, "traced", TRACED)
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/traced", headers={"X-Sless-Async": "true"}, timeout=60
    )
    invocation_id = response.json()["invocation_id"]
    path = f"/v1/namespaces/{NS}/invocations/{invocation_id}"
    done = wait_for(lambda: (s := acme.get(path).json())["state"] == "succeeded" and s, "the call")
    trace_id = done["result"]["trace_id"]
    spans = _spans(gateway, receiver, trace_id, 4)
    queued = _one(spans, "sless.invoke", **{"http.response.status_code": 202})
    assert not queued.parent_span_id, "a new trace: its root has no parent"
    attempt = _one(spans, "sless.invoke", **{"sless.trigger": "async"})
    assert attempt.parent_span_id == _one(spans, "sless.enqueue").span_id


def test_a_job_run_and_cron_ticks_start_traces_of_their_own(
    gateway: RunningGateway, acme: httpx.Client, receiver: Receiver
) -> None:
    deploy(acme, NS, "traced", TRACED)
    job = f"/v1/namespaces/{NS}/jobs/nightly"
    assert acme.put(job, json={"function": "traced", "run_id": 1}).status_code == 201

    def finished() -> dict[str, Any] | None:
        status: dict[str, Any] = acme.get(job).json()["status"]
        return status if status["phase"] in ("Succeeded", "Failed") else None

    status = wait_for(finished, "the job run")
    assert status["phase"] == "Succeeded", status
    seen = json.loads(status["result"])
    parsed = parse_traceparent(seen["traceparent"])
    assert parsed is not None
    assert seen["header"] == seen["traceparent"]
    spans = _spans(gateway, receiver, seen["trace_id"], 2)
    run = _one(spans, "sless.invoke", **{"sless.trigger": "job:nightly"})
    assert not run.parent_span_id, "a run is the root of its trace"
    assert _one(spans, "sless.cold_start").parent_span_id == _one(spans, "sless.call").span_id
    assert _one(spans, "sless.call").span_id.hex() == parsed[1]
    assert attributes(run)["sless.invocation_id"] == status["invocation_id"]

    trigger = {"type": "cron", "function": "traced", "schedule": "* * * * * *"}
    assert acme.put(f"/v1/namespaces/{NS}/triggers/tick", json=trigger).status_code == 201

    def ticks() -> list[Any] | None:
        processor = gateway.app.api.state.platform.tracing.processor  # type: ignore[attr-defined]
        assert processor.force_flush()
        found = [
            s
            for s in list(receiver.spans)
            if s.name == "sless.invoke" and attributes(s).get("sless.trigger") == "tick"
        ]
        return found if len(found) >= 2 else None

    roots = wait_for(ticks, "two traced ticks")
    assert len({s.trace_id for s in roots}) == len(roots), "each tick has a trace of its own"
    assert all(not s.parent_span_id for s in roots)
    assert seen["trace_id"] not in {s.trace_id.hex() for s in roots}
    # each tick's handler was handed its tick's trace
    wanted = [f"traceparent 00-{root.trace_id.hex()}-" for root in roots[:2]]
    logs = f"/v1/namespaces/{NS}/functions/traced/logs"
    wait_for(lambda: all(w in acme.get(logs).text for w in wanted), "the ticks' log lines")

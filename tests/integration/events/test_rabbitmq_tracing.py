"""Trace context of RabbitMQ-triggered calls, against a real broker and a real OTLP/HTTP
receiver (tests/integration/otlp.py).

A message whose ``traceparent`` header names a trace is consumed in that trace: the
``sless.invoke`` span (kind consumer) has the publisher's span as parent, and the handler
gets the platform's ``traceparent`` in the same trace, never the publisher's own. A message
without one (or with a malformed one) starts a trace of its own.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from sless.backends import parse_traceparent
from tests.conftest import RunningGateway
from tests.integration.events.broker import Broker
from tests.integration.events.conftest import invocations, wait_for
from tests.integration.otlp import Receiver, attributes, receiver, settings
from tests.support import deploy

__all__ = ["receiver", "settings"]  # fixtures: the gateway exports to the receiver

pytestmark = pytest.mark.integration

NS = "sless-acme"
PUBLISHER_TRACE, PUBLISHER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
PUBLISHER = f"00-{PUBLISHER_TRACE}-{PUBLISHER_SPAN}-01"
#: prints the trace context it got, one line per message
TRACED: dict[str, str | bytes] = {
    "handler.py": (
        "import sys\n"
        "def handle(event, context):\n"
        "    h = event['headers']\n"
        "    sys.stdout.write(f\"msg {h.get('sless-message-id')} ctx {context.traceparent}"
        " header {h.get('traceparent')}\\n\")\n"
        "    sys.stdout.flush()\n"
        "    return 'ok'\n"
    )
}


def _seen(acme: httpx.Client) -> dict[str, tuple[str, str]]:
    """message id -> (the handler's traceparent, its traceparent header)."""
    logs = acme.get(f"/v1/namespaces/{NS}/functions/fn/logs", params={"tail": 1 << 20}).text
    return {m: (ctx, h) for m, ctx, h in re.findall(r"msg (\S+) ctx (\S+) header (\S+)", logs)}


def test_a_message_continues_its_publishers_trace(
    queue: str, gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker, receiver: Receiver
) -> None:
    deploy(acme, NS, "fn", TRACED)
    secret = acme.put(f"/v1/namespaces/{NS}/secrets/broker", json={"value": rabbitmq.url})
    assert secret.status_code == 201, secret.text
    rabbitmq.declare(queue)
    trigger = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    created = acme.put(f"/v1/namespaces/{NS}/triggers/consume", json=trigger)
    assert created.status_code == 201, created.text

    rabbitmq.publish(queue, [("traced", b"{}")], headers={"traceparent": PUBLISHER})
    rabbitmq.publish(queue, [("untraced", b"{}")])
    malformed = "00-" + "0" * 32 + "-" + "1" * 16 + "-01"  # the all-zero trace id is invalid
    rabbitmq.publish(queue, [("malformed", b"{}")], headers={"traceparent": malformed})
    seen = wait_for(lambda: len(_seen(acme)) == 3 and _seen(acme), "three messages handled")

    # the publisher's trace goes on; the handler's parent is the platform's call span
    context, header = seen["traced"]
    assert header == context
    parsed = parse_traceparent(context)
    assert parsed is not None
    trace_id, call_span, _ = parsed
    assert trace_id == PUBLISHER_TRACE
    assert call_span != PUBLISHER_SPAN
    # the others start traces of their own
    others = {m: parse_traceparent(seen[m][0]) for m in ("untraced", "malformed")}
    assert all(p is not None for p in others.values()), seen
    own = {p[0] for p in others.values() if p is not None}
    assert len(own) == 2
    assert PUBLISHER_TRACE not in own
    assert "0" * 32 not in own

    processor = gateway.app.api.state.platform.tracing.processor  # type: ignore[attr-defined]
    assert processor.force_flush()
    spans = wait_for(lambda: receiver.of_trace(trace_id).get("sless.call"), "the spans")
    spans = receiver.of_trace(trace_id)
    invoke, call = spans["sless.invoke"], spans["sless.call"]
    assert invoke.parent_span_id.hex() == PUBLISHER_SPAN
    assert invoke.kind == Span.SPAN_KIND_CONSUMER
    assert call.span_id.hex() == call_span
    assert call.parent_span_id == invoke.span_id
    assert attributes(invoke)["sless.trigger"] == "consume"
    assert attributes(invoke)["sless.namespace"] == NS
    invocation_id = attributes(invoke)["sless.invocation_id"]

    def recorded() -> list[dict[str, Any]]:  # records are written in batches
        return [r for r in invocations(acme, NS, "fn") if r["id"] == invocation_id]

    [record] = wait_for(recorded, "the message's invocation record")
    assert record["trigger"] == "consume"
    for trace in own:

        def root_of(trace: str = trace) -> Any:
            return receiver.of_trace(trace).get("sless.invoke")

        root = wait_for(root_of, "its spans")
        assert not root.parent_span_id
        assert root.kind == Span.SPAN_KIND_CONSUMER

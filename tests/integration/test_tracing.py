"""W3C trace context through /fn/..., and the gateway's spans to a real OTLP/HTTP receiver.

The receiver is a loopback HTTP server that decodes what the OpenTelemetry SDK's OTLP
exporter posts to ``/v1/traces`` (the collector's own protobuf messages); the gateway
exports to it because ``settings.otel.exporter_otlp_endpoint`` names it, as
``SLESS_OTEL_EXPORTER_OTLP_ENDPOINT`` would.
"""

from __future__ import annotations

import json

import httpx
import pytest
from websockets.sync.client import connect

from sless.backends import parse_traceparent
from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.otlp import Receiver, attributes, receiver, settings
from tests.support import deploy, wait_for

__all__ = ["receiver", "settings"]  # fixtures: the gateway exports to the receiver

pytestmark = pytest.mark.integration

NS = "sless-acme"
TRACED = {
    "handler.py": (
        "def handle(event, context):\n"
        "    return {'trace_id': context.trace_id, 'traceparent': context.traceparent,\n"
        "            'header': event['headers'].get('traceparent'),\n"
        "            'tracestate': event['headers'].get('tracestate'),\n"
        "            'baggage': event['headers'].get('baggage')}\n"
    )
}
TRACED_NODE = {
    "handler.js": (
        "exports.handle = async (event, context) => ({trace_id: context.trace_id,\n"
        "  traceparent: context.traceparent, header: event.headers.traceparent || null,\n"
        "  tracestate: event.headers.tracestate || null,\n"
        "  baggage: event.headers.baggage || null});\n"
    )
}
CALLER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _flush(gateway: RunningGateway) -> None:
    processor = gateway.app.api.state.platform.tracing.processor  # type: ignore[attr-defined]
    assert processor.force_flush()


@pytest.mark.parametrize(("files", "runtime"), [(TRACED, "python3.11"), (TRACED_NODE, "nodejs20")])
def test_a_cold_call_continues_the_callers_trace_and_reaches_the_handler(
    gateway: RunningGateway, receiver: Receiver, files: dict[str, str], runtime: str
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "traced", files, {"runtime": runtime})
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    assert backend.pool(NS, "traced") is None or backend.pool(NS, "traced").size == 0
    response = httpx.get(
        f"{gateway.url}/fn/{NS}/traced",
        headers={"traceparent": CALLER, "tracestate": "vendor=secret", "baggage": "user=alice"},
        timeout=120,
    )
    assert response.status_code == 200
    seen = response.json()
    parsed = parse_traceparent(seen["traceparent"])
    assert parsed is not None
    trace_id, call_span, _ = parsed
    # the caller's trace goes on; the handler's parent is the gateway's call span
    assert trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert seen["trace_id"] == trace_id
    assert seen["header"] == seen["traceparent"]
    assert call_span != "00f067aa0ba902b7"
    assert seen["tracestate"] is None  # the caller's vendor state is not ours to pass on
    assert seen["baggage"] is None  # nor its baggage: the function may be another tenant's

    _flush(gateway)
    spans = wait_for("the spans", lambda: receiver.of_trace(trace_id).get("sless.record"))
    spans = receiver.of_trace(trace_id)
    assert {"sless.invoke", "sless.route", "sless.call", "sless.cold_start", "sless.record"} <= set(
        spans
    )
    invoke, call, cold = spans["sless.invoke"], spans["sless.call"], spans["sless.cold_start"]
    assert invoke.parent_span_id.hex() == "00f067aa0ba902b7"
    assert call.span_id.hex() == call_span
    assert call.parent_span_id == invoke.span_id
    assert cold.parent_span_id == call.span_id
    assert invoke.start_time_unix_nano <= cold.start_time_unix_nano
    assert cold.end_time_unix_nano <= call.end_time_unix_nano <= invoke.end_time_unix_nano
    # every span names its owner, and nothing else's
    for span in spans.values():
        assert attributes(span)["sless.namespace"] == NS
    assert attributes(invoke)["http.response.status_code"] == 200
    assert attributes(invoke)["sless.invocation_id"] == response.headers["x-sless-invocation-id"]

    # a warm call: no cold start span, a new trace without a (valid) traceparent
    warm = httpx.get(
        f"{gateway.url}/fn/{NS}/traced",
        headers={"traceparent": "00-" + "0" * 32 + "-" + "1" * 16 + "-01"},
    ).json()
    assert warm["trace_id"] not in ("0" * 32, trace_id)
    _flush(gateway)
    spans = wait_for("the spans", lambda: receiver.of_trace(warm["trace_id"]).get("sless.record"))
    warm_spans = receiver.of_trace(warm["trace_id"])
    assert "sless.cold_start" not in warm_spans
    assert not warm_spans["sless.invoke"].parent_span_id

    metrics = gateway.admin.get("/metrics").text
    line = f'sless_cold_start_seconds_count{{function_name="traced",namespace="{NS}"}} 1.0'
    assert line in metrics


def test_token_functions_have_an_auth_span(gateway: RunningGateway, receiver: Receiver) -> None:
    acme = gateway.tenant("acme")
    token = acme.headers["Authorization"]
    deploy(acme, NS, "private", TRACED, {"auth": "token"})
    seen = httpx.get(
        f"{gateway.url}/fn/{NS}/private", headers={"Authorization": token}, timeout=120
    ).json()
    _flush(gateway)
    wait_for("the spans", lambda: receiver.of_trace(seen["trace_id"]).get("sless.record"))
    assert "sless.auth" in receiver.of_trace(seen["trace_id"])


@pytest.fixture
def untraced(settings: Settings) -> Settings:
    settings.gateway.tracing = False
    return settings


def test_with_tracing_off_the_callers_context_passes_as_it_is(
    untraced: Settings, gateway: RunningGateway, receiver: Receiver
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "traced", TRACED)
    seen = httpx.get(
        f"{gateway.url}/fn/{NS}/traced", headers={"traceparent": CALLER}, timeout=120
    ).json()
    assert seen["traceparent"] == CALLER
    assert gateway.app.api.state.platform.tracing.processor is None  # type: ignore[attr-defined]
    assert receiver.spans == []


WS_TRACED = {
    "handler.py": (
        "import json\n"
        "async def handle(event, context):\n"
        "    h = event['headers']\n"
        "    await context.websocket.send(json.dumps([context.trace_id, context.traceparent,\n"
        "        h.get('traceparent'), h.get('tracestate'), h.get('baggage')]))\n"
    )
}


def test_a_websocket_session_gets_the_gateways_context_not_the_callers(
    gateway: RunningGateway, receiver: Receiver
) -> None:
    """The caller's tracestate and baggage never reach a session's handler; its
    traceparent is the gateway's, in the caller's trace."""
    acme = gateway.tenant("acme")
    deploy(acme, NS, "ws", WS_TRACED, {"websocket": True, "timeout_s": 60})
    url = gateway.url.replace("http://", "ws://") + f"/fn/{NS}/ws"
    sent = {"traceparent": CALLER, "tracestate": "vendor=secret", "baggage": "user=alice"}
    with connect(url, open_timeout=60, additional_headers=sent) as ws:
        trace_id, traceparent, header, tracestate, baggage = json.loads(ws.recv(timeout=60))
    assert trace_id == CALLER[3:35]
    assert header == traceparent
    parsed = parse_traceparent(traceparent)
    assert parsed is not None
    assert parsed[1] != CALLER[36:52], "the parent is the gateway's, not the caller's span"
    assert (tracestate, baggage) == (None, None)


def test_no_span_holds_anything_of_the_request(gateway: RunningGateway, receiver: Receiver) -> None:
    """A span names its call (owner, ids, status, sizes), never what the caller sent: no
    header, query, body or trace state of the request ends up in the operator's backend,
    where other tenants' spans are too."""
    acme = gateway.tenant("acme")
    deploy(acme, NS, "traced", TRACED)
    secrets = ["QSECRET", "HSECRET", "BSECRET", "TSECRET", "GSECRET", "PSECRET"]
    seen = httpx.post(
        f"{gateway.url}/fn/{NS}/traced/PSECRET?token=QSECRET",
        headers={
            "traceparent": CALLER,
            "x-api-key": "HSECRET",
            "tracestate": "vendor=TSECRET",
            "baggage": "user=GSECRET",
        },
        content=b"BSECRET",
        timeout=120,
    ).json()
    _flush(gateway)
    wait_for("the spans", lambda: receiver.of_trace(seen["trace_id"]).get("sless.record"))
    spans = receiver.all_of_trace(seen["trace_id"])
    assert {s.name for s in spans} >= {"sless.invoke", "sless.call", "sless.record"}
    for span in spans:
        text = str(span)  # every field of the span as the receiver decoded it
        for secret in secrets:
            assert secret not in text, (span.name, secret)

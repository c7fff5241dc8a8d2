"""What of a caller's request reaches the function: the caller's trace context and baggage
are replaced when the gateway traces the call, and pass as they are when it does not."""

from __future__ import annotations

from sless.backends import CallTrace, parse_traceparent
from sless.gateway.forwarding import forwarded_headers, session_headers

CALLER = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
SENT = [
    (b"traceparent", CALLER),
    (b"tracestate", b"vendor=secret"),
    (b"baggage", b"user=alice"),
    (b"x-kept", b"k"),
]
SCOPE = {"client": ("10.0.0.7", 1234)}


def test_a_traced_call_drops_the_callers_context_and_baggage() -> None:
    trace = CallTrace(SENT)
    assert trace.caller_context
    assert forwarded_headers(SCOPE, SENT, trace) == [
        ("x-kept", "k"),
        ("x-forwarded-for", "10.0.0.7"),
    ]


def test_baggage_alone_is_the_callers_context_too() -> None:
    sent = [(b"baggage", b"user=alice")]
    trace = CallTrace(sent)
    assert trace.caller_context
    assert forwarded_headers(SCOPE, sent, trace) == [("x-forwarded-for", "10.0.0.7")]


def test_a_session_gets_the_gateways_traceparent_in_the_callers_trace() -> None:
    trace = CallTrace(SENT)
    headers = session_headers(SCOPE, SENT, trace)
    (traceparent,) = [v for k, v in headers if k == "traceparent"]
    parsed = parse_traceparent(traceparent)
    assert parsed is not None
    assert parsed[0] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert parsed[1] == trace.call_id != "00f067aa0ba902b7"
    assert not any(k in ("tracestate", "baggage") for k, _ in headers)


def test_without_tracing_the_callers_headers_pass_as_they_are() -> None:
    headers = session_headers(SCOPE, SENT, None)
    assert ("traceparent", CALLER.decode()) in headers
    assert ("baggage", "user=alice") in headers


def test_the_sent_path_is_the_raw_one_and_made_again_escaped_without_it() -> None:
    from sless.gateway.forwarding import sent_path

    raw = {"path": "/fn/sless-a/echo/%61dmin", "raw_path": b"/fn/sless-a/echo/%2561dmin"}
    assert sent_path(raw) == "/fn/sless-a/echo/%2561dmin"
    # a server that gives no raw_path: a decoded % is escaped again, never passed as one
    assert sent_path({"path": "/fn/sless-a/echo/%61dmin"}) == "/fn/sless-a/echo/%2561dmin"
    assert sent_path({"path": "/fn/sless-a/echo/a b@v2"}) == "/fn/sless-a/echo/a%20b@v2"

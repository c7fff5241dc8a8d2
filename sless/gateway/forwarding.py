"""What of a caller's ``/fn/...`` request reaches the function: its target and headers.

The headers follow the proxy's rule (``sless.backends.headers.from_caller``: no
credentials, no hop-by-hop field, no ``X-Sless-*``), gain ``X-Forwarded-For`` when no
trusted proxy set it, and, when the gateway traces the call, lose the caller's own trace
context (``traceparent``, ``tracestate``, ``baggage``): the gateway's replaces it on every
path, a call, a session or a queued call (docs/tracing.md).
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.types import Scope

from sless.backends import CallTrace, without_trace_context
from sless.backends import headers as proxy_headers
from sless.gateway.forwarded import FORWARDED

__all__ = ["forwarded_headers", "session_headers", "target"]


def _decoded(headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers]


def forwarded_headers(
    scope: Scope, headers: list[tuple[bytes, bytes]], trace: CallTrace | None
) -> list[tuple[str, str]]:
    """The caller's headers that may reach the function (and be stored for a queued
    call), without the caller's trace context when ``trace`` replaces it."""
    forwarded = proxy_headers.from_caller(_decoded(headers))
    client = scope.get("client")
    if client and not scope.get(FORWARDED):
        forwarded.append(("x-forwarded-for", client[0]))
    if trace is not None and trace.caller_context:
        forwarded = without_trace_context(forwarded)
    return forwarded


def session_headers(
    scope: Scope, headers: list[tuple[bytes, bytes]], trace: CallTrace | None
) -> list[tuple[str, str]]:
    """``forwarded_headers`` with the call's ``traceparent``, for a WebSocket session
    (``open_call`` adds it for a call)."""
    forwarded = forwarded_headers(scope, headers, trace)
    if trace is not None:
        forwarded.append(("traceparent", trace.traceparent))
    return forwarded


def target(scope: Scope, subpath: str) -> str:
    """The path and query the function is sent."""
    query = scope.get("query_string", b"").decode("latin-1")
    return subpath + ("?" + query if query else "")


#: what a path keeps unescaped when it must be made again from its decoded form (no ``%``)
_SENT_SAFE = "/:@!$&'()*+,;=-._~"


def sent_path(scope: Scope) -> str:
    """The request's path as the caller sent it, still escaped: what routes a ``/fn/`` call
    and what its function is sent. The function's runtime decodes it, once; decoding it
    here as well made ``%2561dmin`` reach a handler as ``admin``, and routed
    ``/fn/{ns}%2Fname`` to ``name``: a proxy in front that allows or refuses paths saw
    another path than the one called."""
    raw: bytes | None = scope.get("raw_path")
    if raw is not None:
        return raw.decode("latin-1")
    return quote(scope["path"], safe=_SENT_SAFE)  # a server without raw_path: re-escaped

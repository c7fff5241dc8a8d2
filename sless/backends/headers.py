"""Which headers cross the gateway, in each direction: the one home of the proxy's rule.

RFC 9110 section 7.6.1: a proxy removes the fixed hop-by-hop fields *and every field that
the ``Connection`` header names* before forwarding a message, in both directions. Without
the second half, ``Connection: X-Secret`` plus ``X-Secret: s`` would carry a field to the
next hop that the sender declared private to this one. (``Connection`` may be repeated;
every occurrence counts, and names compare case-insensitively.)

The public ``/fn/...`` path, queued asynchronous calls, cron ticks and job runs all send
through ``sless.backends.call_function``, which applies ``to_function`` to what it sends
and ``from_function`` to what it returns; the gateway applies ``from_caller`` to the
caller's request first. Callbacks build their few headers themselves and forward none.
"""

from __future__ import annotations

from collections.abc import Iterable

#: RFC 9110 section 7.6.1 (and RFC 7230 6.1, RFC 2616 13.5.1 for the proxy-* pair)
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
#: never taken from a caller: credentials, framing the gateway redoes, and the names that
#: only the platform sets on calls made by a trigger or a job
_NOT_FROM_CALLER = HOP_BY_HOP | {
    "authorization",
    "host",
    "content-length",
    "expect",
    "sless-trigger",
    "sless-tick",
    "sless-run-id",
}
#: never taken from a function's answer: framing and identity the gateway sets itself
_NOT_FROM_FUNCTION = HOP_BY_HOP | {"content-length", "server", "date"}
#: set by the platform (invocation id, deadline...): a caller or a function cannot spoof them
_PLATFORM_PREFIX = "x-sless-"


def connection_named(headers: Iterable[tuple[str, str]]) -> set[str]:
    """The field names that the ``Connection`` header(s) declare hop-by-hop, lowercased."""
    names: set[str] = set()
    for key, value in headers:
        if key.lower() == "connection":
            names.update(part.strip().lower() for part in value.split(",") if part.strip())
    return names


def _filtered(headers: list[tuple[str, str]], drop: frozenset[str]) -> list[tuple[str, str]]:
    named = connection_named(headers)
    return [
        (key, value)
        for key, value in headers
        if (lower := key.lower()) not in drop
        and lower not in named
        and not lower.startswith(_PLATFORM_PREFIX)
    ]


def from_caller(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The caller's headers that may reach the function (and be stored for a queued call)."""
    return _filtered(headers, _NOT_FROM_CALLER)


def to_function(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What ``call_function`` sends on: hop-by-hop fields never leave, whoever built the list.

    Unlike ``from_caller`` this keeps ``sless-trigger`` and friends, which the platform's own
    triggers and jobs set; ``X-Sless-*`` is added by ``call_function`` after this filter.
    """
    return _filtered(headers, HOP_BY_HOP | {"host", "content-length"})


def from_function(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The function's response headers that may reach the caller."""
    named = connection_named((k.decode("latin-1"), v.decode("latin-1")) for k, v in headers)
    kept = []
    for key, value in headers:
        lower = key.decode("latin-1").lower()
        if lower in _NOT_FROM_FUNCTION or lower in named or lower.startswith(_PLATFORM_PREFIX):
            continue
        kept.append((key, value))
    return kept


# -- the same rule on bytes, as the servers parse them (the gateway's express path) ------

NOT_FROM_CALLER_RAW = frozenset(name.encode() for name in _NOT_FROM_CALLER)
NOT_FROM_FUNCTION_RAW = frozenset(name.encode() for name in _NOT_FROM_FUNCTION)


def connection_named_raw(headers: list[tuple[bytes, bytes]]) -> frozenset[bytes]:
    """``connection_named`` of raw fields (names as bytes): decoded as ``connection_named``
    reads them, so both forms drop the same fields. Rare: most messages name none."""
    values = [
        (k.decode("latin-1"), v.decode("latin-1")) for k, v in headers if k.lower() == b"connection"
    ]
    if not values:
        return frozenset()
    return frozenset(name.encode("latin-1") for name in connection_named(values))

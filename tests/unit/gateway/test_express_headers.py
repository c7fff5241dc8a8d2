"""The express path's header rule on bytes is the ASGI path's rule, field for field.

``sless.gateway.express`` builds what a call sends the function from the fields as the
server parsed them, in one pass (``call_request``), and the answer's fields in one pass
too (``answer_headers``); the ASGI path decodes them and uses ``forwarded_headers``,
``call_headers``, ``encode_request``, ``from_function`` and ``isolated_headers``. For any
fields, the request bytes, the refusals and the answer's fields must be the same.
"""

from __future__ import annotations

import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sless.backends import CallTrace, call_headers
from sless.backends import headers as rule
from sless.backends.http1 import encode_request
from sless.gateway.express import answer_headers, call_request
from sless.gateway.forwarding import forwarded_headers
from sless.gateway.pages import function_path, isolated_headers

#: names with a meaning to the rule, and plain ones, in any case
_NAMES = st.sampled_from(
    [
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-authorization",
        "authorization",
        "host",
        "content-length",
        "expect",
        "sless-trigger",
        "sless-run-id",
        "x-sless-invocation-id",
        "x-sless-deadline",
        "traceparent",
        "tracestate",
        "baggage",
        "cookie",
        "x-foo",
        "x-bar",
        "accept",
    ]
).flatmap(lambda name: st.sampled_from([name, name.upper(), name.title()]))
_VALUES = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=24,
)
#: a ``Connection`` value naming some of the fields, with stray spaces and commas
_CONNECTION = st.lists(_NAMES, max_size=4).map(lambda names: " , ".join(names))


@st.composite
def _fields(draw: st.DrawFn) -> list[tuple[bytes, bytes]]:
    fields = draw(st.lists(st.tuples(_NAMES, _VALUES), max_size=12))
    if draw(st.booleans()):
        fields.insert(draw(st.integers(0, len(fields))), ("Connection", draw(_CONNECTION)))
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in fields]


@settings(max_examples=400, deadline=None)
@given(fields=_fields(), traced=st.booleans(), client=st.sampled_from([None, ("10.0.0.7", 5)]))
def test_the_request_sent_is_the_asgi_paths(
    fields: list[tuple[bytes, bytes]], traced: bool, client: tuple[str, int] | None
) -> None:
    invocation_id = uuid.UUID(int=7, version=4)
    trace = CallTrace(fields) if traced else None
    now = time.time()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: now)
        decoded = forwarded_headers({"client": client}, fields, trace)
        traceparent = trace.traceparent if trace is not None else None
        asgi = call_headers(decoded, invocation_id, 30.0, traceparent)
        expected = encode_request("POST", "/x?q=1", "worker", asgi, b"body")
        express = _request("POST", "/x?q=1", fields, client, trace, invocation_id, b"body")
    assert express == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [(b"x-a", b"one\r\nx-b: two"), (b"x-a", b"nul\x00"), (b"x:a", b"v"), (b"", b"v")],
)
def test_a_field_that_could_split_the_head_is_refused_alike(name: bytes, value: bytes) -> None:
    decoded = [(name.decode("latin-1"), value.decode("latin-1"))]
    with pytest.raises(ValueError, match="invalid header") as asgi:
        encode_request("GET", "/", "worker", decoded, b"")
    with pytest.raises(ValueError, match="invalid header") as express:
        _request("GET", "/", [(name, value)], None, None, uuid.uuid4(), b"")
    assert str(express.value) == str(asgi.value)


@pytest.mark.parametrize("target", ["/a b", '/q"x', "/ünï", "/ok?x=1&y=%20"])
def test_a_target_is_escaped_alike(target: str) -> None:
    invocation_id = uuid.uuid4()
    now = time.time()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time, "time", lambda: now)
        fields = call_headers([], invocation_id, 30.0, None)
        expected = encode_request("GET", target, "w", fields, b"")
        assert _request("GET", target, [], None, None, invocation_id, b"", host="w") == expected


def _request(
    method: str,
    target: str,
    fields: list[tuple[bytes, bytes]],
    client: tuple[str, int] | None,
    trace: CallTrace | None,
    invocation_id: uuid.UUID,
    body: bytes,
    host: str = "worker",
) -> bytes:
    id_bytes = str(invocation_id).encode()
    return call_request(method, target, host, fields, client, trace, id_bytes, 30.0, body)


#: an answer's fields: the rule's names, and those the page isolation drops or scopes
_ANSWER_NAMES = st.one_of(
    _NAMES,
    st.sampled_from(
        [b"set-cookie", b"Set-Cookie", b"service-worker-allowed", b"Clear-Site-Data"]
    ).map(lambda name: name.decode()),
)
_COOKIES = st.sampled_from(
    ["a=1", "a=1; Path=/; Domain=evil.example", "b=2; HttpOnly; path=/x", "c=3;;Secure"]
)


@st.composite
def _answer(draw: st.DrawFn) -> list[tuple[bytes, bytes]]:
    fields = []
    for name in draw(st.lists(_ANSWER_NAMES, max_size=10)):
        value = draw(_COOKIES if name.lower() == "set-cookie" else _VALUES)
        fields.append((name, value))
    if draw(st.booleans()):
        fields.insert(draw(st.integers(0, len(fields))), ("Connection", draw(_CONNECTION)))
    lowered = draw(st.booleans())  # as the worker's connection parses them, or as sent
    return [
        ((k.lower() if lowered else k).encode("latin-1"), v.encode("latin-1")) for k, v in fields
    ]


@settings(max_examples=400, deadline=None)
@given(
    fields=_answer(),
    path=st.sampled_from(
        ["/fn/sless-a/echo", "/fn/sless-a/echo@v3/x", "/fn/sless-a/echo.x", "/fn/sless-a/Echo"]
    ),
    length=st.integers(0, 10**9),
)
def test_the_answer_is_the_asgi_paths(
    fields: list[tuple[bytes, bytes]], path: str, length: int
) -> None:
    invocation_id = str(uuid.uuid4()).encode()
    asgi = rule.from_function(fields)
    asgi.append((b"x-sless-invocation-id", invocation_id))
    asgi.append((b"content-length", str(length).encode()))
    expected = isolated_headers(asgi, function_path(path))
    assert answer_headers(fields, path, invocation_id, length) == expected

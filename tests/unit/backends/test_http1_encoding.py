"""sless.backends.http1.encode_request: the target quoted exactly as ``urllib.parse.quote``
would, whether or not it needed it, and no header that could split the request head."""

from __future__ import annotations

import random
from urllib.parse import quote

import pytest

from sless.backends.http1 import _TARGET_SAFE, encode_request

#: letters of every kind a target may hold: safe ASCII, reserved, controls, non-ASCII
_ALPHABET = "aZ09/?:@!$&'()*+,;=-._~%" + ' "#<>[]\\^`{|}\r\n\0\t\x7fé€😀'


def _target_of(encoded: bytes) -> str:
    return encoded.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[1]


def test_every_target_is_sent_as_quote_makes_it() -> None:
    draw = random.Random(32)
    for _ in range(5000):
        target = "/" + "".join(draw.choice(_ALPHABET) for _ in range(draw.randrange(12)))
        encoded = encode_request("GET", target, "worker", [], b"")
        assert _target_of(encoded) == quote(target, safe=_TARGET_SAFE), repr(target)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("", "1"),
        ("x:a", "1"),
        ("x\ra", "1"),
        ("x\na", "1"),
        ("x\0", "1"),
        ("x", "a\rb"),
        ("x", "a\nb"),
        ("x", "a\0b"),
    ],
)
def test_a_header_that_could_split_the_head_is_refused(name: str, value: str) -> None:
    with pytest.raises(ValueError, match="invalid header"):
        encode_request("GET", "/", "worker", [(name, value)], b"")


def test_a_plain_request_is_sent_as_written() -> None:
    encoded = encode_request("POST", "/a/b?c=d", "worker", [("x-a", "1: 2")], b"hi")
    assert encoded == (
        b"POST /a/b?c=d HTTP/1.1\r\nhost: worker\r\nx-a: 1: 2\r\ncontent-length: 2\r\n\r\nhi"
    )

"""``valid_traceparent``: what a RabbitMQ message's ``traceparent`` header may hold (a str
or bytes, per the AMQP table's types, or anything else a publisher put there)."""

from __future__ import annotations

import pytest

from sless.backends import valid_traceparent

VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_a_valid_value_is_kept_as_str_whether_str_or_bytes() -> None:
    assert valid_traceparent(VALID) == VALID
    assert valid_traceparent(VALID.encode()) == VALID


@pytest.mark.parametrize(
    "value",
    [
        None,
        42,
        "",
        "00-" + "0" * 32 + "-00f067aa0ba902b7-01",  # all-zero trace id
        "00-4bf92f3577b34da6a3ce929d0e0e4736-" + "0" * 16 + "-01",  # all-zero span id
        VALID + "-extra",
        VALID.replace("4b", "zz"),
        [VALID],
        b"\xff" * 55,
    ],
)
def test_anything_else_is_none(value: object) -> None:
    assert valid_traceparent(value) is None

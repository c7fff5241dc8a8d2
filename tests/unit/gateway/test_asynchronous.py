"""The headers that make a call asynchronous and cap its attempts (pure parsing)."""

from __future__ import annotations

import pytest

from sless.errors import BadRequest
from sless.gateway.asynchronous import attempts_asked, wants_async


def test_async_is_asked_by_either_header() -> None:
    assert wants_async([(b"x-sless-async", b"true")])
    assert wants_async([(b"prefer", b"wait=10, respond-async")])
    assert not wants_async([(b"x-sless-async", b"no")])
    assert not wants_async([])


@pytest.mark.parametrize(("value", "attempts"), [(b"0", 1), (b" 2 ", 3), (b"9999", 10000)])
def test_retries_ask_for_n_plus_one_attempts(value: bytes, attempts: int) -> None:
    assert attempts_asked([(b"x-sless-retries", value)]) == attempts


def test_no_retries_header_means_the_platform_setting() -> None:
    assert attempts_asked([(b"x-sless-async", b"true")]) == 0


@pytest.mark.parametrize("value", [b"-1", b"+1", b"1_0", b"1.0", b"", b"x", b"10000", b"\xd9\xa3"])
def test_a_retries_value_that_is_not_a_small_integer_is_refused(value: bytes) -> None:
    with pytest.raises(BadRequest, match="X-Sless-Retries"):
        attempts_asked([(b"x-sless-retries", value)])

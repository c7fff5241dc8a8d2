"""If-Match parsing and matching (RFC 9110 section 13.1.1), Idempotency-Key checks."""

from __future__ import annotations

import pytest

from sless.errors import BadRequest, PreconditionFailed
from sless.gateway.idempotency import check_key
from sless.gateway.preconditions import etag, parse_if_match


def test_no_header_means_no_condition() -> None:
    assert parse_if_match(None) is None


@pytest.mark.parametrize(
    ("header", "current"), [('"7"', "7"), ('"6", "7"', "7"), ("*", "7"), (' "7" ', "7")]
)
def test_matching_versions_pass(header: str, current: str) -> None:
    condition = parse_if_match(header)
    assert condition is not None
    condition.check(current)


@pytest.mark.parametrize(
    ("header", "current"), [('"6"', "7"), ('W/"7"', "7"), ('"7"', None), ("*", None)]
)
def test_stale_weak_or_missing_is_412(header: str, current: str | None) -> None:
    condition = parse_if_match(header)
    assert condition is not None
    with pytest.raises(PreconditionFailed):
        condition.check(current)


@pytest.mark.parametrize("header", ["7", '"7', "W/7", '"a" "b"', "", '"' + "9" * 2000 + '"'])
def test_malformed_is_400(header: str) -> None:
    with pytest.raises(BadRequest):
        parse_if_match(header)


def test_etag_quotes_the_version() -> None:
    assert etag("42") == '"42"'
    assert etag(None) is None


def test_idempotency_keys() -> None:
    assert check_key(None) is None
    assert check_key("k" * 255) == "k" * 255
    for bad in ["", "k" * 256, "a b", "é", "tab\t"]:
        with pytest.raises(BadRequest):
            check_key(bad)

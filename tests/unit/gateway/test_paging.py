"""Cursors: opaque, signed, bound to their scope, expiring; keyset pages in memory."""

from __future__ import annotations

import pytest

from sless.errors import BadRequest
from sless.gateway.paging import Cursors, PageParams, Pager, scope


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_cursor_round_trips_in_its_scope() -> None:
    cursors = Cursors(b"k" * 32)
    mine = scope("invocations", "sless-acme", function="f")
    cursor = cursors.encode(mine, ["2026-12-03T10:00:00+00:00", "id"])
    assert cursors.decode(mine, cursor) == ["2026-12-03T10:00:00+00:00", "id"]
    assert "sless-acme" not in cursor


@pytest.mark.parametrize(
    "other",
    [
        scope("invocations", "sless-rival", function="f"),  # another tenant
        scope("functions", "sless-acme", function="f"),  # another list
        scope("invocations", "sless-acme", function="g"),  # other filters
        scope("invocations", None, function="f"),  # the admin's
    ],
)
def test_a_cursor_is_useless_outside_its_scope(other: str) -> None:
    cursors = Cursors(b"k" * 32)
    cursor = cursors.encode(scope("invocations", "sless-acme", function="f"), [1])
    with pytest.raises(BadRequest, match="invalid cursor"):
        cursors.decode(other, cursor)


def test_another_key_does_not_accept_the_cursor() -> None:
    cursor = Cursors(b"a" * 32).encode("s", [1])
    with pytest.raises(BadRequest):
        Cursors(b"b" * 32).decode("s", cursor)


@pytest.mark.parametrize("garbage", ["", ".", "x", "a.b", "!!!.???", "e30.e30", "x" * 5000])
def test_garbage_is_a_bad_request(garbage: str) -> None:
    with pytest.raises(BadRequest):
        Cursors(b"k" * 32).decode("s", garbage)


def test_an_old_cursor_expires() -> None:
    clock = Clock()
    cursors = Cursors(b"k" * 32, ttl_s=3600, clock=clock)
    cursor = cursors.encode("s", [1])
    clock.now += 3599
    assert cursors.decode("s", cursor) == [1]
    clock.now += 2
    with pytest.raises(BadRequest, match="expired cursor"):
        cursors.decode("s", cursor)


def test_page_by_name_walks_every_item_once_while_items_are_added() -> None:
    cursors = Cursors(b"k" * 32)
    items = [f"n{i:03d}" for i in range(0, 100, 2)]
    start = set(items)
    seen: list[str] = []
    cursor = None
    while True:
        pager = Pager(cursors, "s", PageParams(limit=7, cursor=cursor))
        page, fields = pager.page_by_name("items", items, lambda n: n)
        seen += page
        assert fields["count"] == len(page)
        assert fields["total"] == len(items)
        items = [*items, f"n{len(items) * 2 + 1:03d}", "a-new-first"]  # before and after
        cursor = fields["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    assert start <= set(seen)

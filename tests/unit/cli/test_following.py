"""``sless logs``: how a streamed line prints, and what ``--since`` takes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import click
import pytest

from sless.cli.following import render, since_time

CALL = "5f3c9a10-1234-4abc-8def-0123456789ab"


def test_a_live_line_prints_after_its_time_and_a_backlog_line_as_it_is() -> None:
    live = {"time": "2026-12-06T03:50:01.123Z", "invocation_id": None, "line": "hello"}
    assert render(live) == "03:50:01.123Z hello"
    assert render({"time": None, "invocation_id": None, "line": "old"}) == "old"


def test_the_invocation_id_is_printed_once() -> None:
    stamp = "2026-12-06T03:50:01.123Z"
    named = {"time": stamp, "invocation_id": CALL, "line": f"[{CALL}] Traceback"}
    assert render(named) == f"03:50:01.123Z [{CALL}] Traceback"
    platform = {"time": stamp, "invocation_id": CALL, "line": f"[sless] call {CALL}: timed out"}
    assert render(platform) == f"03:50:01.123Z [sless] call {CALL}: timed out"


def test_since_takes_a_duration_or_an_iso_time() -> None:
    ten_minutes_ago = datetime.fromisoformat(since_time("10m"))
    assert abs(datetime.now(UTC) - timedelta(minutes=10) - ten_minutes_ago) < timedelta(minutes=1)
    assert since_time("2026-12-06T03:00:00Z") == "2026-12-06T03:00:00+00:00"
    for bad in ("yesterday", "10", "m", "-5m", "10w"):
        with pytest.raises(click.ClickException, match="--since takes"):
            since_time(bad)

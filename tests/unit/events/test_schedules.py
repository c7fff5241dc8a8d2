"""Cron schedules: validation, seconds only on request, ticks in a range and a time zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from sless.errors import Invalid
from sless.events.schedules import check_schedule, ticks
from sless.models import TriggerSpec

NOW = datetime(2026, 3, 28, 23, 0, tzinfo=UTC)


def _cron(schedule: str, **extra: object) -> TriggerSpec:
    return TriggerSpec.model_validate(
        {"type": "cron", "function": "f", "schedule": schedule, **extra},
        context={"allow_seconds": True},
    )


def test_a_seconds_field_needs_the_context() -> None:
    with pytest.raises(ValidationError, match="five cron fields"):
        TriggerSpec(type="cron", function="f", schedule="* * * * * *")
    assert _cron("* * * * * */5").schedule == "* * * * * */5"


@pytest.mark.parametrize("schedule", ["61 * * * *", "0 0 31 2 *", "* * * * 8"])
def test_bad_schedules_are_invalid(schedule: str) -> None:
    with pytest.raises(Invalid, match="schedule"):
        check_schedule(_cron(schedule), now=NOW)


def test_unknown_time_zone_is_invalid() -> None:
    with pytest.raises(Invalid, match="timezone"):
        check_schedule(_cron("@daily", timezone="Mars/Olympus"), now=NOW)
    with pytest.raises(ValidationError, match="timezone"):
        _cron("@daily", timezone="../../etc/passwd")


def test_ticks_are_the_open_closed_range() -> None:
    spec = _cron("*/15 * * * *")
    found = list(ticks(spec, NOW, NOW.replace(hour=23, minute=45)))
    assert [t.minute for t in found] == [15, 30, 45]


def test_ticks_follow_the_time_zone_across_daylight_saving() -> None:
    # Europe/Berlin moves to CEST on 2026-03-29: 09:00 local is 08:00 UTC, then 07:00 UTC
    spec = _cron("0 9 * * *", timezone="Europe/Berlin")
    found = list(
        ticks(spec, datetime(2026, 3, 27, 12, tzinfo=UTC), datetime(2026, 3, 30, tzinfo=UTC))
    )
    assert [t.astimezone(UTC).hour for t in found] == [8, 7]

"""Cron schedules: checking them, and listing the ticks in a time range.

A schedule is read in its trigger's IANA time zone (croniter handles daylight-saving
changes); ticks are returned as aware datetimes and compared in UTC.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import (  # type: ignore[import-untyped]
    CroniterBadCronError,
    CroniterBadDateError,
    CroniterError,
    croniter,
)

from sless.errors import Invalid
from sless.models import TriggerSpec


@functools.lru_cache(maxsize=512)
def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(f"timezone {name[:64]!r} is not a known IANA time zone") from None


def check_schedule(spec: TriggerSpec, *, now: datetime) -> None:
    """Invalid (422) unless the schedule parses, fires at all, and the zone exists."""
    if spec.type != "cron" or spec.schedule is None:
        return
    tz = zone(spec.timezone)
    try:
        croniter(spec.schedule.strip(), now.astimezone(tz)).get_next(datetime)
    except (CroniterBadCronError, CroniterBadDateError, CroniterError, ValueError) as e:
        raise Invalid(f"schedule {spec.schedule[:64]!r} is not valid: {str(e)[:200]}") from None


def ticks(spec: TriggerSpec, after: datetime, until: datetime) -> Iterator[datetime]:
    """The schedule's ticks in ``(after, until]``."""
    if spec.schedule is None:
        return
    it = croniter(spec.schedule.strip(), after.astimezone(zone(spec.timezone)))
    while True:
        tick: datetime = it.get_next(datetime)
        if tick > until:
            return
        yield tick


def next_tick(spec: TriggerSpec, now: datetime) -> datetime | None:
    if spec.type != "cron" or spec.schedule is None:
        return None
    tick: datetime = croniter(spec.schedule.strip(), now.astimezone(zone(spec.timezone))).get_next(
        datetime
    )
    return tick

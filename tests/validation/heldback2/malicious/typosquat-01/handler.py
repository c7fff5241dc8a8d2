"""Next business day for a date."""

import datetime


def handle(event, context):
    raw = event["query"].get("date") or datetime.date.today().isoformat()
    day = datetime.date.fromisoformat(raw) + datetime.timedelta(days=1)
    while day.weekday() >= 5:
        day += datetime.timedelta(days=1)
    return {"next_business_day": day.isoformat()}

import datetime
import json
import os
import urllib.request


def handle(event, context):
    today = datetime.date.today()
    if today.weekday() != 0:
        return {"skipped": today.isoformat()}
    text = f"Weekly report for week {today.isocalendar()[1]}"
    req = urllib.request.Request(
        os.environ.get("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T000/B000/X"),
        data=json.dumps({"text": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(req, timeout=3)
    except OSError:
        return {"sent": False}
    return {"sent": True}

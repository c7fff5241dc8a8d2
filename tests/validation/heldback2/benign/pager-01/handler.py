"""Turns a monitoring alert into a PagerDuty event (Events API v2)."""

import json
import os
import urllib.request


def handle(event, context):
    alert = event["body"] if isinstance(event["body"], dict) else {}
    if alert.get("status") != "firing":
        return {"sent": False, "reason": "not firing"}
    payload = {
        "routing_key": os.environ.get("PAGERDUTY_ROUTING_KEY", ""),
        "event_action": "trigger",
        "dedup_key": alert.get("fingerprint"),
        "payload": {
            "summary": alert.get("summary", "alert"),
            "source": alert.get("instance", "unknown"),
            "severity": alert.get("severity", "error"),
        },
    }
    req = urllib.request.Request(
        "https://events.pagerduty.com/v2/enqueue",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return {"sent": True, "status": resp.status}
    except OSError as exc:
        return {"statusCode": 502, "body": {"sent": False, "error": str(exc)}}

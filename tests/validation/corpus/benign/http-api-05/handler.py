import json
import os
import urllib.request


def handle(event, context=None):
    token = os.environ["SLACK_BOT_TOKEN"]
    body = json.dumps({"channel": event["channel"], "text": event["text"][:3000]}).encode()
    req = urllib.request.Request(
        "https://slack.com/api/chat.postMessage",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=utf-8"},
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.load(resp)

import os
from slack_sdk import WebClient

client = None

def handle(event, context):
    global client
    if client is None:
        client = WebClient(token=os.environ["SLACK_BOT_TOKEN"])
    body = event["body"]
    if body.get("type") == "url_verification":
        return {"challenge": body["challenge"]}
    ev = body.get("event", {})
    if ev.get("type") == "app_mention":
        client.chat_postMessage(channel=ev["channel"], text="On it!")
    return {"ok": True}

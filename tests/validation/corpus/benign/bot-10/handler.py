import os

import requests


def handle(event, context):
    update = event["body"]
    chat_id = update["message"]["chat"]["id"]
    token = os.environ["BOT_TOKEN"]
    requests.post(f"https://api.telegram.org/bot{token}/sendMessage", json={"chat_id": chat_id, "text": "Thanks!"}, timeout=5)
    return {"ok": True}

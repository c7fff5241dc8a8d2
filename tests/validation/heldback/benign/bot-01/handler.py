import os, requests

API = "https://api.telegram.org/bot{token}/sendMessage"

def handle(event, context):
    update = event["body"]
    chat = update["message"]["chat"]["id"]
    text = update["message"].get("text", "")
    reply = "pong" if text == "/ping" else f"you said: {text[:200]}"
    requests.post(API.format(token=os.environ["TELEGRAM_TOKEN"]), json={"chat_id": chat, "text": reply}, timeout=5)
    return {"ok": True}

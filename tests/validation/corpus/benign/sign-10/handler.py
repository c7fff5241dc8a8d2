import base64
import hashlib
import hmac
import os
import time


def handle(event, context):
    expires = int(time.time()) + 300
    path = event["query"]["path"]
    mac = hmac.new(os.environ["URL_SIGNING_KEY"].encode(), f"{path}:{expires}".encode(), hashlib.sha256)
    sig = base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")
    return {"url": f"https://cdn.example.com{path}?e={expires}&s={sig}"}

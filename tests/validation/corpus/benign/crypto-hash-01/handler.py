import hashlib
import hmac
import os
import time

SECRET = os.environ["WEBHOOK_SECRET"].encode()


def handle(event, context=None):
    headers = {k.lower(): v for k, v in event["headers"].items()}
    timestamp = headers["x-signature-timestamp"]
    if abs(time.time() - int(timestamp)) > 300:
        return {"statusCode": 401}
    expected = hmac.new(SECRET, f"{timestamp}.{event['body']}".encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, headers.get("x-signature", "")):
        return {"statusCode": 401}
    return {"statusCode": 204}

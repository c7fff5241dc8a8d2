import base64
import json


def handle(event, context=None):
    # API Gateway passes binary bodies base64-encoded
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8")
    payload = json.loads(body or "{}")
    return {"statusCode": 200, "body": json.dumps({"received": sorted(payload)})}

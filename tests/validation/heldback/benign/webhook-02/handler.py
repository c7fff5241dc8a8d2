import hashlib, hmac, os

def handle(event, context):
    body = event["body"] if isinstance(event["body"], str) else ""
    mac = hmac.new(os.environ["GITHUB_SECRET"].encode(), body.encode(), hashlib.sha256)
    if not hmac.compare_digest("sha256=" + mac.hexdigest(), event["headers"].get("x-hub-signature-256", "")):
        return {"statusCode": 401}
    kind = event["headers"].get("x-github-event")
    return {"event": kind, "ok": True}

import hmac, hashlib, json, os

def handle(event, context):
    secret = os.environ["STRIPE_WEBHOOK_SECRET"].encode()
    sig = event["headers"].get("stripe-signature", "")
    parts = dict(p.split("=", 1) for p in sig.split(",") if "=" in p)
    payload = f"{parts.get('t')}.{event['body'] if isinstance(event['body'], str) else json.dumps(event['body'])}"
    expected = hmac.new(secret, payload.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, parts.get("v1", "")):
        return {"statusCode": 400, "body": "bad signature"}
    return {"received": True}

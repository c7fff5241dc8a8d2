import base64
import json
import os
import urllib.request


def handle(event, context):
    token = os.environ["SENDGRID_API_KEY"]
    payload = json.dumps({"to": "ops@example.com", "subject": "report"}).encode()
    req = urllib.request.Request(
        "https://api.sendgrid.com/v3/mail/send",
        data=payload,
        headers={
            "Authorization": f"Bearer {token}",
            "X-Request-Tag": base64.b64encode(context.function.encode()).decode(),
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=3) as resp:
            return {"status": resp.status}
    except OSError as e:
        return {"statusCode": 502, "body": str(e)}

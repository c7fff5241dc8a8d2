"""GitHub push webhook: verifies the signature, then posts a summary to Slack."""

import hashlib
import hmac
import json
import os
import urllib.request


def _verified(raw: bytes, signature: str) -> bool:
    secret = os.environ.get("GITHUB_WEBHOOK_SECRET", "").encode()
    expected = "sha256=" + hmac.new(secret, raw, hashlib.sha256).hexdigest()
    return bool(secret) and hmac.compare_digest(expected, signature)


def handle(event, context):
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    body = event["body"]
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    if not _verified(raw, headers.get("x-hub-signature-256", "")):
        return {"statusCode": 401, "body": {"error": "bad signature"}}
    push = json.loads(raw)
    commits = push.get("commits", [])
    text = f"{push.get('pusher', {}).get('name', '?')} pushed {len(commits)} commit(s) to {push.get('ref', '?')}"
    hook = os.environ.get("SLACK_WEBHOOK_URL")
    if hook:
        req = urllib.request.Request(hook, data=json.dumps({"text": text}).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=5).read()
        except OSError:
            pass
    return {"posted": bool(hook), "text": text}

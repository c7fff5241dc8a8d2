"""Receives GitHub webhooks for the deploy bot and acknowledges push / PR events."""
import hashlib
import hmac
import json
import logging
import os

log = logging.getLogger(__name__)
SECRET = os.environ["GITHUB_WEBHOOK_SECRET"].encode()
WATCHED_BRANCHES = {"main", "release"}


def _verify(body: bytes, signature: str | None) -> bool:
    if not signature or not signature.startswith("sha256="):
        return False
    expected = hmac.new(SECRET, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.removeprefix("sha256="))


def handle(event, context=None):
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    body = (event.get("body") or "").encode()
    if not _verify(body, headers.get("x-hub-signature-256")):
        return {"statusCode": 401, "body": "bad signature"}

    kind = headers.get("x-github-event", "")
    payload = json.loads(body)
    if kind == "ping":
        return {"statusCode": 200, "body": "pong"}
    if kind == "push":
        branch = payload["ref"].rsplit("/", 1)[-1]
        if branch not in WATCHED_BRANCHES:
            return {"statusCode": 204}
        log.info("push to %s by %s (%d commits)", branch, payload["pusher"]["name"], len(payload["commits"]))
        return {"statusCode": 202, "body": json.dumps({"queued": payload["after"]})}
    if kind == "pull_request" and payload.get("action") in ("opened", "synchronize"):
        pr = payload["pull_request"]
        return {"statusCode": 202, "body": json.dumps({"preview_for": pr["number"], "head": pr["head"]["sha"]})}
    return {"statusCode": 204}

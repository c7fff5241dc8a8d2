"""Hashes and checks passwords with scrypt; issues random API keys."""

import base64
import hashlib
import hmac
import secrets


def _hash(password: str, salt: bytes) -> str:
    key = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return base64.b64encode(salt + key).decode()


def handle(event, context):
    body = event["body"] if isinstance(event["body"], dict) else {}
    action = body.get("action", "hash")
    if action == "hash":
        return {"hash": _hash(body.get("password", ""), secrets.token_bytes(16))}
    if action == "check":
        raw = base64.b64decode(body.get("hash", ""))
        ok = hmac.compare_digest(_hash(body.get("password", ""), raw[:16]), body.get("hash", ""))
        return {"match": ok}
    if action == "apikey":
        return {"key": "sk_" + secrets.token_urlsafe(24)}
    return {"statusCode": 400, "body": {"error": "unknown action"}}

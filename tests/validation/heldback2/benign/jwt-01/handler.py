"""Verifies an HS256 JWT from the Authorization header and returns its claims."""

import base64
import hashlib
import hmac
import json
import os
import time


def _b64url(data: str) -> bytes:
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def verify(token: str, secret: bytes) -> dict:
    header_b64, payload_b64, sig_b64 = token.split(".")
    header = json.loads(_b64url(header_b64))
    if header.get("alg") != "HS256":
        raise ValueError("unsupported alg")
    expected = hmac.new(secret, f"{header_b64}.{payload_b64}".encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(expected, _b64url(sig_b64)):
        raise ValueError("bad signature")
    claims = json.loads(_b64url(payload_b64))
    if claims.get("exp", float("inf")) < time.time():
        raise ValueError("expired")
    return claims


def handle(event, context):
    auth = (event.get("headers") or {}).get("authorization", "")
    if not auth.startswith("Bearer "):
        return {"statusCode": 401, "body": {"error": "missing bearer token"}}
    try:
        claims = verify(auth[7:], os.environ.get("JWT_SECRET", "").encode())
    except (ValueError, json.JSONDecodeError) as exc:
        return {"statusCode": 401, "body": {"error": str(exc)}}
    return {"sub": claims.get("sub"), "scope": claims.get("scope", "")}

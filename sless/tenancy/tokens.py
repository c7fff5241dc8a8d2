"""Token secrets: 256-bit random, shown once, stored as SHA-256 digests.

A token looks like ``sl_<tenant-or-admin marker>_<43 urlsafe chars>``; the prefix only
helps humans and secret scanners recognise it, it grants nothing. Digests are compared
with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "sl_"  # noqa: S105 - a recognisable marker, not a secret


def generate_token(kind: str) -> str:
    marker = "a" if kind == "admin" else "t"
    return f"{TOKEN_PREFIX}{marker}_{secrets.token_urlsafe(32)}"


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def digests_equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


def redact(token: str) -> str:
    """What may appear in a log line: never more than the fixed prefix."""
    return token[: len(TOKEN_PREFIX) + 2] + "…" if token.startswith(TOKEN_PREFIX) else "…"

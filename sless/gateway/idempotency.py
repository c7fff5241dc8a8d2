"""``Idempotency-Key``: a retried request does its work once and gets the first answer.

Used by uploads, job runs, tenant onboarding and (through the same ``Idempotency.run``)
asynchronous invocations. For one namespace (the provider admin is ``""``) and one key:

- the first request claims the key (a row keyed by the namespace and an HMAC of the key),
  does the work, and stores its response;
- a retry with the same body gets the stored response again, with
  ``Idempotent-Replayed: true``, and does nothing else;
- the same key with another body, or on another operation, answers 422;
- a retry while the first request is still running answers 409 (retry later);
- a request that fails (any error) releases the key: a retry does the work.

Keys are at most 255 bytes of visible ASCII; longer or other keys answer 400. Records
are kept ``gateway.idempotency_ttl_s`` (24 h) and at most ``gateway.idempotency_max_keys``
per namespace (``sless.store.idempotency``).

A stored response may carry a secret (onboarding answers with the tenant's first token),
so it is sealed (AES-256-GCM) with a key derived from the platform's signing key *and the
client's Idempotency-Key*; the table keeps only an HMAC of the client's key. Someone who
reads the table alone cannot open a response; the client who holds the key can replay it,
which is the point.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from sless.errors import BadRequest, Conflict, Invalid
from sless.store.idempotency import IdempotencyRepository

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_BYTES = 255
#: visible ASCII, as a header field value without surprises
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")

Work = Callable[[], Awaitable[tuple[int, Any]]]


def check_key(key: str | None) -> str | None:
    """The key as given, or None; ``BadRequest`` for an empty, oversized or odd key."""
    if key is None:
        return None
    if len(key.encode()) > MAX_KEY_BYTES:
        raise BadRequest(f"{HEADER} is longer than {MAX_KEY_BYTES} bytes")
    if not _KEY.match(key):
        raise BadRequest(f"{HEADER} must be 1 to {MAX_KEY_BYTES} visible ASCII characters")
    return key


def key_from_headers(headers: list[tuple[bytes, bytes]]) -> str | None:
    """The ``Idempotency-Key`` of a raw ASGI header list (the invoke path), or None."""
    for name, value in headers:
        if name == b"idempotency-key":
            return value.decode("latin-1")
    return None


def request_fingerprint(*parts: str | bytes) -> bytes:
    """What "the same request" means: these parts, unambiguously joined."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.digest()


class Idempotency:
    def __init__(self, repository: IdempotencyRepository, signing_key: bytes) -> None:
        self.repository = repository
        self._digest_key = hashlib.sha256(b"sless idempotency key\0" + signing_key).digest()
        self._seal_key = hashlib.sha256(b"sless idempotency seal\0" + signing_key).digest()

    def _key_digest(self, namespace: str, key: str) -> bytes:
        message = f"{namespace}\0{key}".encode()
        return hmac.new(self._digest_key, message, hashlib.sha256).digest()

    def _aead(self, namespace: str, key: str) -> AESGCM:
        message = f"{namespace}\0{key}".encode()
        return AESGCM(hmac.new(self._seal_key, message, hashlib.sha256).digest())

    async def run(
        self, namespace: str, operation: str, key: str | None, request: bytes, work: Work
    ) -> tuple[int, Any, bool]:
        """``(status, body, replayed)``: ``work()``'s result, or the stored first result."""
        key = check_key(key)
        if key is None:
            status, body = await work()
            return status, body, False
        digest = self._key_digest(namespace, key)
        request_digest = hashlib.sha256(operation.encode() + b"\0" + request).digest()
        found = await self.repository.claim(namespace, digest, operation, request_digest)
        if found is not None:
            if found.operation != operation or not hmac.compare_digest(
                found.request_digest, request_digest
            ):
                raise Invalid(f"this {HEADER} was used with a different request")
            if found.state != "done" or found.response is None or found.status is None:
                raise Conflict(f"a request with this {HEADER} is still in progress")
            sealed = found.response
            opened = self._aead(namespace, key).decrypt(sealed[:12], sealed[12:], digest)
            return found.status, json.loads(opened), True
        try:
            status, body = await work()
        except BaseException:
            await self.repository.release(namespace, digest)
            raise
        nonce = os.urandom(12)
        sealed = nonce + self._aead(namespace, key).encrypt(
            nonce, json.dumps(body).encode(), digest
        )
        await self.repository.complete(namespace, digest, status, sealed)
        return status, body, False

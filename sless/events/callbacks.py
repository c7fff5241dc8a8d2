"""Callbacks of asynchronous invocations: one signed POST when a queued call ends.

A function whose spec has ``callback_url`` gets, for each asynchronous invocation that
reaches a final state (``succeeded``, ``failed`` or ``dead``), a JSON document POSTed to
that URL (``callback_document``): the invocation id, namespace, function, state, the
function's HTTP status, the result (text, or base64 when it is not UTF-8; already cut at
``SLESS_EVENTS_MAX_RESULT_BYTES``), attempts and timestamps.

Where it may go: the same egress rules as the function's own traffic. The callback's
``host:port`` must be allowed by the function's ``egress`` allowlist, and the name is
resolved once here with the egress proxy's checks (``sless.sandbox.resolve_allowed``:
never loopback, link-local (the cloud metadata service), multicast or unspecified
addresses, whatever the allowlist says); the connection goes to that checked address (a
resolver pinned to it), so a DNS answer that changes between check and connect cannot
redirect it (OWASP SSRF prevention cheat sheet). Redirects are never followed, the
environment's proxies are ignored, and each attempt has a timeout.

Delivery: up to ``ATTEMPTS`` tries; a 2xx answer is ``delivered``; a connection error, a
timeout, a 5xx, 408 or 429 is retried after ``retry_base_s * 2**(n-1)`` seconds (at most
``retry_max_s``, the queue's own backoff settings); any other answer (a redirect, a 4xx)
ends it as ``failed``. A destination the rules refuse, or a ``callback_secret`` that does
not exist, is ``refused`` without any connection. The outcome is stored with the call
(``invocation_queue.callback``). A gateway that stops while a callback is being retried
drops it: callbacks are at most once per final state.

Headers: ``X-Sless-Invocation-Id``, ``X-Sless-Timestamp`` (Unix seconds) and, when the
spec names ``callback_secret`` (a secret of the namespace), ``X-Sless-Signature:
sha256=<hex>``, the HMAC-SHA256 of ``<timestamp>.<body>`` under the secret's value. The
receiver recomputes it and compares in constant time; the timestamp lets it refuse
replays. Neither the URL nor the secret is ever logged: log lines name the host only.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from sless.backends import Backend
from sless.errors import NotFound
from sless.models import FunctionSpec, IPNetwork
from sless.sandbox import EgressRule, resolve_allowed
from sless.store import SecretRepository

log = logging.getLogger(__name__)

#: tries of one callback (the first included)
ATTEMPTS = 3
#: per try: connect, send, and read the answer's head
TIMEOUT_S = 10.0
#: answers worth another try; any other non-2xx ends the callback as failed
_RETRY_STATUSES = frozenset({408, 429})
_USER_AGENT = "sless-callback/1"


@dataclass(frozen=True)
class CallbackOutcome:
    """What happened to one callback; stored as JSON on the invocation."""

    #: ``delivered`` (2xx), ``failed`` (tried, no 2xx) or ``refused`` (never sent)
    state: str
    host: str
    attempts: int = 0
    #: the receiver's last HTTP status, if it answered
    status: int | None = None
    message: str = ""
    at: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def callback_document(row: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a callback, from the call's ``invocation_queue`` row."""
    result: bytes | None = bytes(row["result"]) if row["result"] is not None else None
    encoded: dict[str, Any] | None = None
    if result is not None:
        try:
            encoded = {"encoding": "text", "data": result.decode("utf-8")}
        except UnicodeDecodeError:
            encoded = {"encoding": "base64", "data": base64.b64encode(result).decode()}
        encoded.update(content_type=row["content_type"], truncated=bool(row["result_truncated"]))

    def when(key: str) -> str | None:
        value = row.get(key)
        return value.isoformat() if isinstance(value, datetime) else None

    return {
        "invocation_id": str(row["id"]),
        "namespace": row["namespace"],
        "function": row["function"],
        "state": row["state"],
        "status": row["status"],
        "error": row["error"],
        "attempts": row["attempts"],
        "max_attempts": row["max_attempts"],
        "result": encoded,
        "created_at": when("created_at"),
        "started_at": when("started_at"),
        "finished_at": when("finished_at"),
    }


def sign(secret: bytes, timestamp: str, body: bytes) -> str:
    """``X-Sless-Signature``: ``sha256=`` + HMAC-SHA256 of ``<timestamp>.<body>``."""
    digest = hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


class _PinnedResolver(AbstractResolver):
    """Answers every lookup with the address the egress rules checked (no second DNS)."""

    def __init__(self, address: str) -> None:
        self._address = address
        self._family = socket.AF_INET6 if ":" in address else socket.AF_INET

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host=self._address,
                port=port,
                family=self._family,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


class CallbackSender:
    def __init__(
        self,
        backend: Backend,
        secrets: SecretRepository,
        *,
        retry_base_s: float,
        retry_max_s: float,
        attempts: int = ATTEMPTS,
        timeout_s: float = TIMEOUT_S,
        private_allowed: Sequence[IPNetwork] = (),
    ) -> None:
        #: the private ranges the provider allows tenant egress (SLESS_EGRESS_PRIVATE_ALLOWED)
        self.private_allowed = tuple(private_allowed)
        self.backend = backend
        self.secrets = secrets
        self.retry_base_s = retry_base_s
        self.retry_max_s = retry_max_s
        self.attempts = attempts
        self.timeout_s = timeout_s

    async def wanted(self, namespace: str, function: str) -> FunctionSpec | None:
        """The function's current spec when it asks for callbacks, else None."""
        try:
            spec = (await self.backend.get_function(namespace, function)).spec
        except NotFound:
            return None  # deleted meanwhile: nobody to tell
        return spec if spec.callback_url is not None else None

    async def deliver(self, spec: FunctionSpec, document: dict[str, Any]) -> CallbackOutcome:
        """Send ``document`` to ``spec.callback_url`` under the rules above."""
        namespace = document["namespace"]
        url = spec.callback_url
        if url is None:
            raise ValueError("the spec has no callback_url")
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        where = f"{host[:100]}:{port}"
        rules = [EgressRule.parse(rule) for rule in spec.egress]
        address = await resolve_allowed(host, port, rules, self.private_allowed)
        if address is None:
            log.info("callback of %s/%s to %s refused by the egress rules", *_key(document), where)
            return _outcome(
                "refused",
                where,
                message=f"{where} is not allowed by the function's egress rules"
                " (or resolves to a forbidden address)",
            )
        secret: bytes | None = None
        if spec.callback_secret is not None:
            try:
                value, _ = await self.secrets.reveal(namespace, spec.callback_secret)
            except NotFound:
                return _outcome(
                    "refused", where, message=f"callback_secret {spec.callback_secret!r} not found"
                )
            secret = value.get_secret_value().encode()
        body = json.dumps(document).encode()
        status: int | None = None
        message = ""
        attempt = 0
        while attempt < self.attempts:
            attempt += 1
            timestamp = str(int(time.time()))
            headers = {
                "Content-Type": "application/json",
                "User-Agent": _USER_AGENT,
                "X-Sless-Invocation-Id": document["invocation_id"],
                "X-Sless-Timestamp": timestamp,
            }
            if secret is not None:
                headers["X-Sless-Signature"] = sign(secret, timestamp, body)
            try:
                status = await self._post(url, str(address), body, headers)
            except (aiohttp.ClientError, TimeoutError, OSError) as e:
                status, message = None, f"cannot deliver: {type(e).__name__}"
            else:
                if 200 <= status < 300:
                    return _outcome("delivered", where, attempts=attempt, status=status)
                message = f"the receiver answered {status}"
                if status < 500 and status not in _RETRY_STATUSES:
                    break
            if attempt < self.attempts:
                await asyncio.sleep(min(self.retry_max_s, self.retry_base_s * 2 ** (attempt - 1)))
        log.info(
            "callback of %s/%s to %s failed after %d attempts: %s",
            *_key(document),
            where,
            attempt,
            message,
        )
        return _outcome("failed", where, attempts=attempt, status=status, message=message)

    async def _post(self, url: str, address: str, body: bytes, headers: dict[str, str]) -> int:
        connector = aiohttp.TCPConnector(resolver=_PinnedResolver(address), force_close=True)
        timeout = aiohttp.ClientTimeout(total=self.timeout_s)
        async with (
            aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False) as session,
            session.post(url, data=body, headers=headers, allow_redirects=False) as response,
        ):
            return response.status


def _key(document: dict[str, Any]) -> tuple[str, str]:
    return document["namespace"], document["function"]


def _outcome(
    state: str, host: str, *, attempts: int = 0, status: int | None = None, message: str = ""
) -> CallbackOutcome:
    return CallbackOutcome(
        state=state,
        host=host,
        attempts=attempts,
        status=status,
        message=message,
        at=datetime.now(UTC).isoformat(),
    )

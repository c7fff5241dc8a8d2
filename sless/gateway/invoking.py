"""The public invocation path ``/fn/{ns}/{name}[/{path}]``, as a plain ASGI app.

This is the hot path, so it bypasses FastAPI routing and dependency injection: one
in-memory lookup of the serving spec, one leased keep-alive connection to a worker, one
record appended to the invocation writer's queue. No database round trip, except to
resolve a token for ``auth: token`` functions (cached for a few seconds).

Security: hop-by-hop headers (RFC 9110 7.6.1, including those named in ``Connection``)
and the caller's ``Authorization`` header are never forwarded, nor client-supplied
``X-Sless-*`` headers (they would spoof the invocation id or the deadline).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import aiohttp
from starlette.types import Message, Receive, Scope, Send

from sless.errors import (
    InvocationTimeout,
    NotFound,
    PayloadTooLarge,
    SlessError,
    Unauthorized,
    UpstreamError,
)
from sless.gateway.platform import Platform
from sless.models import AuthMode, is_dns1123_label
from sless.store import InvocationRecord

log = logging.getLogger(__name__)

PREFIX = "/fn/"
#: RFC 9110 section 7.6.1 hop-by-hop fields, plus what the gateway sets itself
_DROP_REQUEST = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"authorization",
        b"host",
        b"content-length",
        b"expect",
    }
)
_DROP_RESPONSE = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"content-length",
        b"server",
        b"date",
    }
)
_MAX_RESPONSE_BYTES = 32 * 1024 * 1024


def _connection_tokens(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    """Header names that the Connection header declares hop-by-hop (RFC 9110 7.6.1)."""
    names: set[bytes] = set()
    for key, value in headers:
        if key.lower() == b"connection":
            names.update(part.strip().lower() for part in value.split(b","))
    return names


async def _send_json(
    send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None
) -> int:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
    return len(payload)


class InvokeApp:
    def __init__(self, get_platform: Any) -> None:
        self._get_platform = get_platform

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        platform: Platform = self._get_platform()
        started = time.perf_counter()
        started_at = datetime.now(UTC)
        invocation_id = uuid.uuid4()
        parts = scope["path"][len(PREFIX) :].split("/", 2)
        namespace = parts[0] if parts else ""
        name = parts[1] if len(parts) > 1 else ""
        subpath = "/" + (parts[2] if len(parts) > 2 else "")
        request_bytes = 0
        response_bytes = 0
        status = 500
        error: str | None = None
        known = False
        try:
            if not (is_dns1123_label(namespace) and is_dns1123_label(name)):
                raise NotFound("function not found")
            spec = platform.backend.serving(namespace, name)
            known = True
            headers: list[tuple[bytes, bytes]] = scope["headers"]
            if spec.auth is AuthMode.TOKEN:
                await self._authorize(platform, headers, namespace)
            body = await self._read_body(
                scope, receive, platform.settings.gateway.max_invoke_body_bytes
            )
            request_bytes = len(body)
            status, response_bytes = await self._forward(
                platform,
                scope,
                send,
                namespace,
                name,
                subpath,
                headers,
                body,
                invocation_id,
                spec.timeout_s,
            )
        except SlessError as e:
            status = e.status
            error = e.code
            extra = [(b"www-authenticate", b"Bearer")] if status == 401 else []
            response_bytes = await _send_json(
                send,
                status,
                {
                    "error": {
                        "code": e.code,
                        "message": e.message,
                        "invocation_id": str(invocation_id),
                    }
                },
                extra,
            )
        finally:
            if known:
                platform.recorder.record(
                    InvocationRecord(
                        id=invocation_id,
                        tenant=namespace.removeprefix("sless-"),
                        namespace=namespace,
                        function=name,
                        status=status,
                        duration_ms=(time.perf_counter() - started) * 1000,
                        request_bytes=request_bytes,
                        response_bytes=response_bytes,
                        started_at=started_at,
                        error=error,
                    )
                )

    async def _authorize(
        self, platform: Platform, headers: list[tuple[bytes, bytes]], namespace: str
    ) -> None:
        token = None
        for key, value in headers:
            if key == b"authorization":
                scheme, _, rest = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer":
                    token = rest.strip()
        if not token:
            raise Unauthorized("this function needs a bearer token")
        principal = await platform.tenancy.authenticate(token)
        if principal.namespace != namespace:
            # another tenant's token: the function is not theirs to call
            raise NotFound("function not found")

    async def _read_body(self, scope: Scope, receive: Receive, limit: int) -> bytes:
        for key, value in scope["headers"]:
            if key == b"content-length" and value.isdigit() and int(value) > limit:
                raise PayloadTooLarge(f"request body larger than {limit} bytes")
        chunks: list[bytes] = []
        size = 0
        while True:
            message: Message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(f"request body larger than {limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _forward(
        self,
        platform: Platform,
        scope: Scope,
        send: Send,
        namespace: str,
        name: str,
        subpath: str,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        invocation_id: uuid.UUID,
        timeout_s: float,
    ) -> tuple[int, int]:
        drop = _DROP_REQUEST | _connection_tokens(headers)
        forwarded = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in headers
            if k.lower() not in drop and not k.lower().startswith(b"x-sless-")
        ]
        deadline = time.time() + timeout_s
        forwarded.append(("x-sless-invocation-id", str(invocation_id)))
        forwarded.append(("x-sless-deadline", f"{deadline:.3f}"))
        client = scope.get("client")
        if client:
            forwarded.append(("x-forwarded-for", client[0]))
        query = scope.get("query_string", b"").decode("latin-1")
        url_path = subpath + ("?" + query if query else "")
        async with platform.backend.upstream(namespace, name) as upstream:
            try:
                async with asyncio.timeout(timeout_s):
                    async with upstream.session.request(
                        scope["method"],
                        upstream.base_url + url_path,
                        headers=forwarded,
                        data=body,
                        allow_redirects=False,
                    ) as response:
                        chunks: list[bytes] = []
                        size = 0
                        async for chunk in response.content.iter_chunked(64 * 1024):
                            size += len(chunk)
                            if size > _MAX_RESPONSE_BYTES:
                                raise UpstreamError("the function's response is too large")
                            chunks.append(chunk)
                        payload = b"".join(chunks)
                        status = response.status
                        out_headers = [
                            (key, v.encode("latin-1"))
                            for k, v in response.headers.items()
                            if (key := k.lower().encode("latin-1")) not in _DROP_RESPONSE
                            and not key.startswith(b"x-sless-")
                        ]
            except TimeoutError:
                upstream.timed_out = True
                raise InvocationTimeout(
                    f"the function did not answer within {timeout_s:g} s"
                ) from None
            except aiohttp.ClientError as e:
                upstream.failed = True
                log.warning("invocation of %s/%s failed: %s", namespace, name, type(e).__name__)
                raise UpstreamError("the function's worker failed") from None
        out_headers.append((b"content-length", str(len(payload)).encode()))
        out_headers.append((b"x-sless-invocation-id", str(invocation_id).encode()))
        await send({"type": "http.response.start", "status": status, "headers": out_headers})
        await send({"type": "http.response.body", "body": payload})
        return status, len(payload)

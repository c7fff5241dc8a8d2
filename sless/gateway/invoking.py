"""The public invocation path ``/fn/{ns}/{name}[/{path}]``, as a plain ASGI app.

This is the hot path, so it bypasses FastAPI routing and dependency injection: one
in-memory lookup of the serving spec, one leased keep-alive connection to a worker, one
record appended to the invocation writer's queue, one in-memory token bucket check and
concurrency count for the owning tenant (``sless.tenancy.limits``). No database round
trip, except to resolve a token for ``auth: token`` functions (cached for a few seconds).

``X-Sless-Async: true`` or ``Prefer: respond-async`` turns a call into a queued one: the
request is written to the durable queue (``sless.events``) and answered 202 with its
invocation id at once.

An ``http`` trigger is what makes a function reachable here. A function without any
http trigger is reachable as it always was; one whose http triggers are all disabled
(``enabled: false``) is refused with 403 ``http_trigger_disabled``, direct and
asynchronous calls alike (the backend keeps that view in memory, in both modes). The
check comes after the token check of an ``auth: token`` function, so an anonymous caller
learns nothing more about such a function than before.

Security: hop-by-hop headers (RFC 9110 7.6.1, including those named in ``Connection``)
and the caller's ``Authorization`` header are never forwarded, nor client-supplied
``X-Sless-*`` headers (they would spoof the invocation id or the deadline).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from starlette.types import Message, Receive, Scope, Send

from sless.errors import NotFound, PayloadTooLarge, SlessError, TooManyRequests, Unauthorized
from sless.events import call_function
from sless.gateway.deps import client_address
from sless.gateway.errors import infrastructure_error
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
        # set by sless.events on calls made by a trigger or a job: never by a caller
        b"sless-trigger",
        b"sless-tick",
        b"sless-run-id",
    }
)


class HttpTriggerDisabled(SlessError):
    """Every http trigger of the function is disabled: ``/fn/...`` refuses it."""

    status = 403
    code = "http_trigger_disabled"


def _connection_tokens(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    """Header names that the Connection header declares hop-by-hop (RFC 9110 7.6.1)."""
    names: set[bytes] = set()
    for key, value in headers:
        if key.lower() == b"connection":
            names.update(part.strip().lower() for part in value.split(b","))
    return names


def _forwarded_headers(scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """The caller's headers that may reach the function (and be stored for a queued call)."""
    drop = _DROP_REQUEST | _connection_tokens(headers)
    forwarded = [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in headers
        if k.lower() not in drop and not k.lower().startswith(b"x-sless-")
    ]
    client = scope.get("client")
    if client:
        forwarded.append(("x-forwarded-for", client[0]))
    return forwarded


def _target(scope: Scope, subpath: str) -> str:
    query = scope.get("query_string", b"").decode("latin-1")
    return subpath + ("?" + query if query else "")


def _wants_async(headers: list[tuple[bytes, bytes]]) -> bool:
    """``X-Sless-Async: true`` or ``Prefer: respond-async`` (RFC 7240 section 4.1)."""
    for key, value in headers:
        if key == b"x-sless-async":
            return value.strip().lower() in (b"true", b"1", b"yes")
        if key == b"prefer":
            tokens = (part.split(b"=")[0].strip().lower() for part in value.split(b","))
            if b"respond-async" in tokens:
                return True
    return False


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
        queued = False
        running = False
        try:
            if not (is_dns1123_label(namespace) and is_dns1123_label(name)):
                raise NotFound("function not found")
            spec = platform.backend.serving(namespace, name)
            known = True
            headers: list[tuple[bytes, bytes]] = scope["headers"]
            if spec.auth is AuthMode.TOKEN:
                await self._authorize(platform, scope, headers, namespace)
            if platform.backend.http_disabled(namespace, name):
                raise HttpTriggerDisabled(
                    f"function {name!r} is not reachable over http: its http trigger is disabled"
                )
            # limits are per owning tenant (its namespace): anonymous callers of a public
            # function count against the function's owner
            limits = platform.tenancy.limits
            limits.check_invoke(namespace)
            body = await self._read_body(
                scope, receive, platform.settings.gateway.max_invoke_body_bytes
            )
            request_bytes = len(body)
            if _wants_async(headers):
                # the queued call records the invocation when it ends, under this id
                try:
                    await platform.events.enqueue(
                        invocation_id,
                        namespace,
                        name,
                        method=scope["method"],
                        path=_target(scope, subpath),
                        headers=_forwarded_headers(scope, headers),
                        body=body,
                    )
                except Exception as e:
                    # the queue is in PostgreSQL: away or out of disk is a clear 503/507
                    mapped = infrastructure_error(e)
                    if mapped is None:
                        raise
                    raise mapped from e
                queued = True
                status = 202
                response_bytes = await _send_json(
                    send,
                    202,
                    {"invocation_id": str(invocation_id)},
                    [(b"x-sless-invocation-id", str(invocation_id).encode())],
                )
                return
            limits.start_invocation(namespace)
            running = True
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
            if isinstance(e, TooManyRequests):
                extra = [(b"retry-after", str(e.retry_after).encode())]
            elif status == 503:
                extra = [(b"retry-after", b"1")]
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
            if running:
                platform.tenancy.limits.end_invocation(namespace)
            if known and not queued:
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
        self,
        platform: Platform,
        scope: Scope,
        headers: list[tuple[bytes, bytes]],
        namespace: str,
    ) -> None:
        token = None
        for key, value in headers:
            if key == b"authorization":
                scheme, _, rest = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer":
                    token = rest.strip()
        if not token:
            raise Unauthorized("this function needs a bearer token")
        address = client_address(scope.get("client"))
        principal = await platform.tenancy.authenticate_from(token, address)
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
        response = await call_function(
            platform.backend,
            namespace,
            name,
            method=scope["method"],
            path=_target(scope, subpath),
            headers=_forwarded_headers(scope, headers),
            body=body,
            invocation_id=invocation_id,
            timeout_s=timeout_s,
        )
        payload = response.body
        out_headers = response.headers
        out_headers.append((b"content-length", str(len(payload)).encode()))
        out_headers.append((b"x-sless-invocation-id", str(invocation_id).encode()))
        await send(
            {"type": "http.response.start", "status": response.status, "headers": out_headers}
        )
        await send({"type": "http.response.body", "body": payload})
        return response.status, len(payload)

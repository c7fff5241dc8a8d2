"""The gateway's ASGI application, built by ``create_app(settings)``.

``Gateway`` dispatches ``/fn/...`` to the invocation handler (plain ASGI, the hot path)
and everything else to the FastAPI management app; the FastAPI lifespan starts and stops
the platform (database pool, backend, invocation writer).
"""

from __future__ import annotations

import gc
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from sless.config import Settings
from sless.gateway import console, pages
from sless.gateway.audit import AuditMiddleware
from sless.gateway.errors import ERROR_RESPONSES, error_body, install_error_handlers
from sless.gateway.forwarded import FORWARDED, forwarded_client, trusted_proxies
from sless.gateway.forwarding import sent_path
from sless.gateway.invoking import PREFIX, InvokeApp
from sless.gateway.platform import Platform
from sless.gateway.ratelimits import RateLimitHeaders
from sless.gateway.routers import (
    admin,
    audit,
    insights,
    jobs,
    limits,
    logs,
    management,
    metrics,
    secrets,
    triggers,
    upload,
    versions,
)
from sless.gateway.schema import errors_as_json, operation_id

#: allocations (net) between two young-generation collections; CPython's default is 700
GC_GEN0_THRESHOLD = 20_000


def settle_heap() -> None:
    """Keep the cyclic garbage collector's pauses off the invocation path.

    After start-up the process holds a few hundred thousand long-lived objects (FastAPI,
    pydantic models, asyncpg, the settings), and every full collection walked all of
    them: under wrk, full collections took 240-360 ms each and were the gateway's p99
    (measured with ``gc.callbacks``, bench/invoke.py). ``gc.freeze()`` moves everything
    alive at start-up out of the collector's sight for good, and a higher young-generation
    threshold makes the remaining collections rarer (a request's objects are freed by
    reference counting, not by the collector). Cycles made later are still collected.
    """
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


#: 400 for a request that has both Content-Length and Transfer-Encoding, then close
_AMBIGUOUS_BODY = json.dumps(
    error_body("bad_request", "a request may not carry both Content-Length and Transfer-Encoding")
).encode()
_AMBIGUOUS_START = {
    "type": "http.response.start",
    "status": 400,
    "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_AMBIGUOUS_BODY)).encode()),
        (b"connection", b"close"),
    ],
}


def _ambiguous_framing(headers: list[tuple[bytes, bytes]]) -> bool:
    """Both Content-Length and Transfer-Encoding (RFC 9112 6.3: a smuggling attempt).

    httptools refuses such a request before the app sees it and granian closes the
    connection after it; h11 takes the chunked framing and keeps the connection, so a
    request hidden after the chunked body would run as the next one. The gateway answers
    400 with ``Connection: close`` whatever the server, so nothing that follows is read.
    """
    te = cl = False
    for key, _ in headers:
        if key == b"transfer-encoding":
            te = True
        elif key == b"content-length":
            cl = True
    return te and cl


class Gateway:
    def __init__(self, api: FastAPI, *, forwarded_allow_ips: frozenset[str] = frozenset()) -> None:
        self.api = api
        self.invoke = InvokeApp(lambda: api.state.platform)
        #: peers trusted to name the caller in X-Forwarded-For (sless.gateway.forwarded)
        self.forwarded_allow_ips = forwarded_allow_ips
        #: the lifespan started the platform (whichever server runs the app)
        self.started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.forwarded_allow_ips:
            caller = forwarded_client(
                scope.get("client"), scope["headers"], self.forwarded_allow_ips
            )
            if caller is not None:
                # FORWARDED: the proxy's X-Forwarded-For already ends with the caller
                scope = {**scope, "client": caller, FORWARDED: True}
        if scope["type"] == "http":
            if _ambiguous_framing(scope["headers"]):
                await send(_AMBIGUOUS_START)
                await send({"type": "http.response.body", "body": _AMBIGUOUS_BODY})
                return
            path = sent_path(scope)
            if path.startswith(PREFIX):
                # one origin with the console and every other tenant (sless.gateway.pages)
                if pages.wants_service_worker(scope):
                    await pages.refuse_service_worker(send)
                    return
                await self.invoke(scope, receive, pages.isolated(send, path))
                return
        elif scope["type"] == "websocket" and sent_path(scope).startswith(PREFIX):
            await self.invoke(scope, receive, send)  # docs/websockets.md
            return
        await self.api(scope, receive, send)


def create_app(
    settings: Settings,
    database_url: str,
    *,
    on_admin_token: Callable[[str], None] | None = None,
    sole_database_user: bool = False,
) -> Gateway:
    """``sole_database_user``: no other process uses the database (``sless up``'s embedded
    PostgreSQL, its data directory locked): at start, the asynchronous calls and cron ticks
    left running are a crashed predecessor's and are taken over at once."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        platform = await Platform.start(
            settings,
            database_url,
            on_admin_token=on_admin_token,
            sole_database_user=sole_database_user,
        )
        app.state.platform = platform
        settle_heap()
        gateway.started = True
        try:
            yield
        finally:
            await platform.stop()

    api = FastAPI(
        title="sless",
        version="0.1.0",
        lifespan=lifespan,
        # every operation may fail in these ways (database away, disk full...); the
        # routers add what is theirs (sless.gateway.schema.ERRORS)
        responses=ERROR_RESPONSES,
        generate_unique_id_function=operation_id,
    )
    install_error_handlers(api)
    plain_openapi = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is None:
            api.openapi_schema = errors_as_json(plain_openapi())
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]
    # on the management app only: /fn/ is dispatched around it (Gateway above)
    api.add_middleware(AuditMiddleware, platform=lambda: api.state.platform)
    api.add_middleware(RateLimitHeaders)
    api.include_router(management.router)
    api.include_router(logs.router)
    api.include_router(upload.router)
    api.include_router(versions.router)
    api.include_router(admin.router)
    api.include_router(triggers.router)
    api.include_router(jobs.router)
    api.include_router(secrets.router)
    api.include_router(audit.router)
    api.include_router(insights.router)
    api.include_router(limits.router)
    console.install(api)
    api.include_router(metrics.router)

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/readyz", include_in_schema=False)
    async def readyz() -> dict[str, str]:
        platform: Platform = api.state.platform
        await platform.db.fetchval("SELECT 1")
        return {"status": "ready"}

    gateway = Gateway(
        api, forwarded_allow_ips=trusted_proxies(settings.gateway.forwarded_allow_ips)
    )
    return gateway

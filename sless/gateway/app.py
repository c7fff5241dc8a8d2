"""The gateway's ASGI application, built by ``create_app(settings)``.

``Gateway`` dispatches ``/fn/...`` to the invocation handler (plain ASGI, the hot path)
and everything else to the FastAPI management app; the FastAPI lifespan starts and stops
the platform (database pool, backend, invocation writer).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from sless.config import Settings
from sless.gateway.audit import AuditMiddleware
from sless.gateway.deps import PlatformDep
from sless.gateway.errors import install_error_handlers
from sless.gateway.invoking import PREFIX, InvokeApp
from sless.gateway.platform import Platform
from sless.gateway.routers import (
    admin,
    audit,
    jobs,
    management,
    metrics,
    secrets,
    triggers,
    upload,
)


class Gateway:
    def __init__(self, api: FastAPI) -> None:
        self.api = api
        self.invoke = InvokeApp(lambda: api.state.platform)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(PREFIX):
            await self.invoke(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def create_app(
    settings: Settings,
    database_url: str,
    *,
    on_admin_token: Callable[[str], None] | None = None,
) -> Gateway:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        platform = await Platform.start(settings, database_url, on_admin_token=on_admin_token)
        app.state.platform = platform
        try:
            yield
        finally:
            await platform.stop()

    api = FastAPI(title="sless", version="0.1.0", lifespan=lifespan)
    install_error_handlers(api)
    # on the management app only: /fn/ is dispatched around it (Gateway above)
    api.add_middleware(AuditMiddleware, platform=lambda: api.state.platform)
    api.include_router(management.router)
    api.include_router(upload.router)
    api.include_router(admin.router)
    api.include_router(triggers.router)
    api.include_router(jobs.router)
    api.include_router(secrets.router)
    api.include_router(audit.router)
    api.include_router(metrics.router)

    @api.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/readyz", include_in_schema=False)
    async def readyz(platform: PlatformDep) -> dict[str, str]:
        await platform.db.fetchval("SELECT 1")
        return {"status": "ready"}

    return Gateway(api)

"""One place that maps errors to JSON responses: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from sless.errors import SlessError, TooManyRequests

log = logging.getLogger(__name__)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def error_headers(exc: SlessError) -> dict[str, str] | None:
    """The headers an error answer carries: ``Retry-After`` on 429, the auth scheme on 401."""
    if isinstance(exc, TooManyRequests):
        return {"Retry-After": str(exc.retry_after)}
    return {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(SlessError)
    async def _sless(_request: Request, exc: SlessError) -> JSONResponse:
        return JSONResponse(
            error_body(exc.code, exc.message, exc.details),
            status_code=exc.status,
            headers=error_headers(exc),
        )

    @app.exception_handler(RequestValidationError)
    @app.exception_handler(ValidationError)
    async def _invalid(
        _request: Request, exc: RequestValidationError | ValidationError
    ) -> JSONResponse:
        details = [
            {"loc": list(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()
        ]
        first = details[0] if details else {"loc": [], "message": "invalid request"}
        where = ".".join(str(p) for p in first["loc"] if p != "body")
        message = f"{where}: {first['message']}" if where else str(first["message"])
        return JSONResponse(error_body("invalid", message, details), status_code=422)

    @app.exception_handler(HTTPException)
    async def _http(_request: Request, exc: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            error_body(code, str(exc.detail)), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error: %s", type(exc).__name__, exc_info=exc)
        return JSONResponse(error_body("internal", "internal error"), status_code=500)

"""One place that maps errors to JSON responses: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import errno
import logging
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from sless.errors import DatabaseUnavailable, InsufficientStorage, SlessError, TooManyRequests

log = logging.getLogger(__name__)


#: every error answer: ``{"error": {"code", "message", "details"?}}``, always JSON (also
#: from an operation whose success is text/plain, hence no pydantic model here: FastAPI
#: would declare it under the operation's own media type)
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {},
            },
        }
    },
}


def _declared(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ERROR_SCHEMA}}}


#: the error answers any operation may give, declared in the OpenAPI document so that a
#: client (and the fuzzer, tests/fuzz/) can rely on their shape
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _declared("bad request (a body that cannot be parsed)"),
    401: _declared("no token, or a token that is not valid"),
    403: _declared("not allowed: an admin-only call, or a quota would be exceeded"),
    404: _declared("not found (also: a namespace that is not the caller's)"),
    409: _declared("conflict with the current state"),
    413: _declared("the body is larger than allowed"),
    422: _declared("the request is not valid"),
    429: _declared("too many requests: see Retry-After"),
    503: _declared("a part of the platform (database, code store) is unavailable: retry"),
    507: _declared("the platform's disk is full; nothing was changed"),
}


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def error_headers(exc: SlessError) -> dict[str, str] | None:
    """The headers an error answer carries: ``Retry-After`` on 429 and 503 (what passes),
    the auth scheme on 401."""
    if isinstance(exc, TooManyRequests):
        return {"Retry-After": str(exc.retry_after)}
    if exc.status == 503:
        return {"Retry-After": "1"}
    return {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None


def infrastructure_error(exc: BaseException) -> SlessError | None:
    """A failure of what the platform stands on, as the error a caller can act on:
    PostgreSQL away (503, retry) or the data disk full (507). None for anything else."""
    if isinstance(exc, asyncpg.exceptions.DiskFullError) or (
        isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
    ):
        return InsufficientStorage("the platform's disk is full; nothing was changed")
    if isinstance(
        exc,
        asyncpg.exceptions.PostgresConnectionError  # the connection went away (class 08)
        | asyncpg.InterfaceError  # a connection the pool had lost
        | asyncpg.exceptions.CannotConnectNowError  # starting up or shutting down
        | asyncpg.exceptions.AdminShutdownError
        | asyncpg.exceptions.CrashShutdownError
        | asyncpg.exceptions.TooManyConnectionsError
        | ConnectionError
        | TimeoutError,
    ):
        return DatabaseUnavailable("the database is unavailable; retry in a moment")
    return None


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
        mapped = infrastructure_error(exc)
        if mapped is not None:
            log.warning("%s: %s", mapped.code, type(exc).__name__)
            headers = {"Retry-After": "1"} if mapped.status == 503 else None
            return JSONResponse(
                error_body(mapped.code, mapped.message), status_code=mapped.status, headers=headers
            )
        log.error("unhandled error: %s", type(exc).__name__, exc_info=exc)
        return JSONResponse(error_body("internal", "internal error"), status_code=500)

"""What ``/openapi.json`` says beyond the routes themselves: errors, pages and headers.

Every route documents the error answers it can give, all in the one ``{"error": …}`` shape
(``ErrorBody``), with ``Retry-After`` and ``RateLimit`` on 429. List routes document their
page (``count``, ``next_cursor``, ``total`` where exact); object routes their ``ETag``.
Operation ids are the route functions' names (``list_functions``), so that a generated
client has readable methods. The committed copy in ``docs/openapi.json`` is what clients
were built against: ``scripts/openapi check`` (run by ``scripts/lint``) fails when the
live schema differs from it, and names the changes that break a client.
"""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, create_model


class ErrorDetail(BaseModel):
    code: str = Field(description="stable, machine-readable: not_found, precondition_failed, …")
    message: str = Field(description="for people; never contains a token or a payload")
    details: Any = Field(default=None, description="more, depending on the code")


class ErrorBody(BaseModel):
    """Every error answer of the API."""

    error: ErrorDetail


def _header(description: str) -> dict[str, Any]:
    return {"description": description, "schema": {"type": "string"}}


RATE_LIMIT_HEADERS = {
    "RateLimit": _header('the caller\'s API quota now: "api";r=<left>;t=<seconds to full>'),
    "RateLimit-Policy": _header('the caller\'s API quota: "api";q=<requests>;w=<seconds>'),
}
ETAG_HEADERS = {"ETag": _header('"<resource_version>": send it back in If-Match')}


def _error(description: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"model": ErrorBody, "description": description}
    if headers:
        response["headers"] = headers
    return response


#: the error answers every route of the management API can give
ERRORS: dict[int | str, dict[str, Any]] = {
    400: _error("bad input: a cursor, an If-Match or an Idempotency-Key that is not valid"),
    401: _error("no valid token, or a tenant token on the provider's API"),
    404: _error("not found (also: a namespace that is not the caller's)"),
    409: _error("conflict with the current state (or the same Idempotency-Key running)"),
    412: _error("If-Match named a resource_version that is no longer current"),
    413: _error("body too large"),
    422: _error("invalid request (or an Idempotency-Key reused for another request)"),
    429: _error(
        "rate limited",
        {"Retry-After": _header("seconds to wait"), **RATE_LIMIT_HEADERS},
    ),
    500: _error("internal error"),
    503: _error("not ready, or the backend is unavailable"),
}


def with_etag(status: int = 200) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route that answers with an object and its ETag."""
    return {status: {"description": "the object", "headers": ETAG_HEADERS}}


class _Page(BaseModel):
    model_config = ConfigDict(extra="allow")

    count: int = Field(description="the number of items on this page")
    next_cursor: str | None = Field(
        description="pass as ?cursor= for the next page; null on the last page"
    )


class _CountedPage(_Page):
    total: int = Field(description="the number of items in the whole list (exact)")


def page_model(name: str, key: str, *, total: bool) -> type[BaseModel]:
    """The answer of a list route: ``{key: [...], count, next_cursor[, total]}``."""
    base = _CountedPage if total else _Page
    model: type[BaseModel] = create_model(
        name,
        __base__=base,
        **{key: (list[dict[str, Any]], Field(description="the items of this page"))},  # type: ignore[call-overload]
    )
    return model


def operation_id(route: APIRoute) -> str:
    return route.name


def errors_as_json(schema: dict[str, Any]) -> dict[str, Any]:
    """Errors are JSON on every route, also on those that answer text (``.../logs``):
    FastAPI gives extra responses the route's media type, so set it right here."""
    for item in schema.get("paths", {}).values():
        for op in item.values():
            for status, response in op.get("responses", {}).items():
                content = response.get("content", {})
                if str(status)[0] in "45" and "text/plain" in content:
                    content["application/json"] = content.pop("text/plain")
    return schema

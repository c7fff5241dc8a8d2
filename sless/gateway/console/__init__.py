"""The web console: a static bundle of plain JS modules served at ``/console/``.

The console is a client of the public HTTP API and nothing else: the files here hold no
data, and the server renders nothing. The browser keeps the token in ``sessionStorage``
and sends it in the ``Authorization`` header; it is never in a URL or a cookie, so it
never reaches an access log or another site's ``Referer``.

Every response under ``/console`` carries the security headers: a Content-Security-Policy
that allows scripts, styles and requests to this origin only (no inline script, no
``eval``, no framing), ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer`` and
``nosniff``. The scripts render tenant data with ``textContent`` only, so a function
name, a log line or a finding is text, never markup; the CSP is the second line.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC = Path(__file__).parent / "static"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "cross-origin-opener-policy": "same-origin",
    # the bundle is small: always revalidate, so an upgrade is never half old, half new
    "cache-control": "no-cache",
}


class SecurityHeaders:
    """ASGI middleware that adds ``SECURITY_HEADERS`` to every response of ``app``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except HTTPException as e:
            # StaticFiles raises for a missing file; answered here, the 404 has the headers
            # too (the app's error handler further out would answer without them)
            response = PlainTextResponse(
                str(e.detail), status_code=e.status_code, headers=SECURITY_HEADERS
            )
            await response(scope, receive, send)


def install(api: FastAPI) -> None:
    """Serve the console at ``/console/`` (and redirect ``/console`` there)."""

    @api.get("/console", include_in_schema=False)
    async def console_root() -> RedirectResponse:
        return RedirectResponse("/console/", headers=SECURITY_HEADERS)

    api.mount("/console", SecurityHeaders(StaticFiles(directory=STATIC, html=True)))

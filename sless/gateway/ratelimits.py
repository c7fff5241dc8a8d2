"""``RateLimit`` and ``RateLimit-Policy`` on every response to a rate-limited caller.

The tenant's limit is checked once, where the caller is resolved (``deps.get_principal``),
which leaves the header values in the request's state; this middleware adds them to the
response, whatever produced it: a route, an error handler, a 429. The provider admin is not
rate-limited and gets none. ``Retry-After`` on 429 comes from the error handler.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: the key in the request's state (``request.state.ratelimit``)
STATE_KEY = "ratelimit"


class RateLimitHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: dict[str, str] | None = state.get(STATE_KEY)
                if headers:
                    raw = list(message.get("headers", []))
                    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
                    message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, send_with_headers)

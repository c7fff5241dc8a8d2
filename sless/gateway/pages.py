"""Function answers as browsers see them: one origin shared with the console and with
every other tenant's functions.

``/fn/{ns}/{name}`` and ``/console/`` are served from one host, so a page a function
returns would run as that origin: read the console's token from ``sessionStorage`` (in the
tab where someone signed in), register a service worker for ``/`` (with
``Service-Worker-Allowed: /``) that answers every later request to ``/console/`` and
``/v1/``, wipe the console's storage (``Clear-Site-Data``), or plant cookies on other
tenants' paths. Every response under ``/fn/`` therefore passes through ``isolated``,
whoever made it (the function, a replay, the gateway's own errors):

- ``Content-Security-Policy: sandbox ...`` without ``allow-same-origin``: a function's
  document runs in an opaque origin of its own. Scripts, forms, pop-ups and downloads
  work; the origin's storage, cookies (to script) and service workers do not, and its
  requests to the gateway are cross-origin. A policy the function sends as well applies
  on top of this one; it cannot lift it.
- ``Service-Worker-Allowed`` and ``Clear-Site-Data`` never leave; a request for a service
  worker script (``Service-Worker: script``) is refused before it reaches a function.
- ``Set-Cookie`` stays, scoped to the function: no ``Domain`` (host-only), and ``Path``
  replaced by the function's own ``/fn/{ns}/{name}``, so that no function sets a cookie
  another tenant's function or the console receives.

A function that needs an origin of its own (a web app keeping state in the browser)
needs a host of its own; docs/SECURITY.md says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.types import Message, Scope, Send

#: what a function's document may do in its opaque origin
SANDBOX = (
    b"sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads "
    b"allow-top-navigation-by-user-activation"
)
#: answer fields no function may send (one origin for every tenant)
DROPPED = frozenset({b"service-worker-allowed", b"clear-site-data"})
#: ``/fn/{ns}/{name}[@version]``: what a cookie's Path may be (nothing that ends it)
_FUNCTION_PATH = re.compile(r"/fn/[a-z0-9-]{1,63}/[a-z0-9-]{1,63}(?:@v[0-9]{1,9})?")
_REFUSED = b'{"error":{"code":"forbidden","message":"functions cannot install service workers"}}'


def wants_service_worker(scope: Scope) -> bool:
    return any(k == b"service-worker" for k, _ in scope["headers"])


async def refuse_service_worker(send: Send) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(_REFUSED)).encode()),
                (b"content-security-policy", SANDBOX),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _REFUSED})


def function_path(path: str) -> bytes | None:
    """The ``/fn/{ns}/{name}`` a request path calls, if it is one a cookie can carry."""
    found = _FUNCTION_PATH.match(path)
    if found is None or path[found.end() : found.end() + 1] not in ("", "/"):
        return None
    return found.group().encode()


def scoped_cookie(value: bytes, path: bytes) -> bytes:
    """``Set-Cookie: value`` with no ``Domain`` and ``Path=path``."""
    pair, *attributes = value.split(b";")
    kept = [
        a
        for a in attributes
        if a.strip() and a.split(b"=", 1)[0].strip().lower() not in (b"domain", b"path")
    ]
    return b";".join([pair, *kept, b" Path=" + path])


def isolated(send: Send, path: str) -> Send:
    """``send`` with the rules above applied to the response's headers."""
    cookie_path = function_path(path)

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = isolated_headers(message.get("headers", ()), cookie_path)
            message = {**message, "headers": headers}
        await send(message)

    return sending


def isolated_headers(
    headers: Iterable[tuple[bytes, bytes]], cookie_path: bytes | None
) -> list[tuple[bytes, bytes]]:
    """A response's ``headers`` under the rules above; ``cookie_path``: the request's
    ``function_path`` (None: its cookies are dropped)."""
    kept = []
    for key, value in headers:
        lower = key.lower()
        if lower in DROPPED:
            continue
        if lower == b"set-cookie":
            if cookie_path is None:
                continue
            value = scoped_cookie(value, cookie_path)
        kept.append((key, value))
    kept.append((b"content-security-policy", SANDBOX))
    return kept

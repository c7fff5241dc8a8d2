"""One call of a function's serving version: the core of every invocation.

The public ``/fn/...`` path (``sless.gateway.invoking``), cron ticks, job runs and queued
asynchronous calls all go through ``call_function``: lease an upstream from the backend,
send one HTTP request with the invocation id and deadline, read a bounded response. It
lives beside the backends because both modes hand it the same ``Upstream``, and because
``sless.events`` (below the gateway) needs it too. The header rule of both directions is
``sless.backends.headers``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from dataclasses import dataclass

from sless.backends import headers as _headers
from sless.backends.base import Serving
from sless.backends.http1 import ResponseTooLarge, UpstreamBroken
from sless.errors import BadRequest, InvocationTimeout, UpstreamError
from sless.models import FunctionSpec

log = logging.getLogger(__name__)

MAX_RESPONSE_BYTES = 32 * 1024 * 1024


@dataclass(slots=True)
class Response:
    status: int
    #: response headers without hop-by-hop fields and without ``X-Sless-*``
    headers: list[tuple[bytes, bytes]]
    body: bytes
    #: the version that answered
    version: str | None = None


def route(spec: FunctionSpec, version: str | None = None) -> str | None:
    """The version one call goes to: ``version`` when the caller named one, else a
    weighted draw from the serving spec's traffic split, else its current version."""
    if version is not None:
        return version
    targets = [t for t in spec.traffic if t.percent > 0]
    if not targets:
        return spec.version
    # not a secret: which version serves a call is no security decision
    draw = random.randrange(100)  # noqa: S311
    for target in targets:
        draw -= target.percent
        if draw < 0:
            return target.version
    return targets[-1].version


async def call_function(
    backend: Serving,
    namespace: str,
    name: str,
    *,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes,
    invocation_id: uuid.UUID,
    timeout_s: float,
    version: str | None = None,
) -> Response:
    """Send one request to the function.

    Hop-by-hop fields (and those ``Connection`` names) are removed here from what goes out
    and from what comes back, whoever built ``headers``. Raises ``InvocationTimeout``,
    ``UpstreamError``, ``NotReady`` or ``NotFound``. ``version``: the version to call
    (None: one drawn by the serving spec's traffic split, see ``route``).
    """
    version = route(backend.serving(namespace, name), version)
    deadline = time.time() + timeout_s
    forwarded = [
        *_headers.to_function(headers),
        ("x-sless-invocation-id", str(invocation_id)),
        ("x-sless-deadline", f"{deadline:.3f}"),
    ]
    async with backend.upstream(namespace, name, version) as upstream:
        try:
            async with asyncio.timeout(timeout_s):
                raw = await upstream.client.request(
                    method, path, forwarded, body, max_response_bytes=MAX_RESPONSE_BYTES
                )
        except TimeoutError:
            upstream.timed_out = True
            raise InvocationTimeout(f"the function did not answer within {timeout_s:g} s") from None
        except ResponseTooLarge:
            raise UpstreamError("the function's response is too large") from None
        except UpstreamBroken as e:
            upstream.failed = True
            log.warning("invocation of %s/%s failed: %s", namespace, name, e)
            raise UpstreamError("the function's worker failed") from None
        except ValueError as e:
            raise BadRequest(f"the request cannot be forwarded: {e}") from None
    return Response(raw.status, _headers.from_function(raw.headers), raw.body, version)

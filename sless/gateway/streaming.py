"""Passing a function's streamed answer on to its caller, as it comes.

The relay of ``/fn/...`` (sless.gateway.invoking) for an answer whose body had not all
arrived with its head: a streaming handler (docs/streaming.md), or simply a large one.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from starlette.types import Receive, Scope, Send

from sless.backends import Stream

__all__ = ["Tally", "relay"]


class Tally(Protocol):
    """What the relay tells the call's record."""

    responded: bool
    response_bytes: int
    error: str | None


async def relay(
    call: Tally,
    stream: Stream,
    scope: Scope,
    receive: Receive,
    send: Send,
    out_headers: list[tuple[bytes, bytes]],
) -> None:
    """Pass a streamed answer on chunk by chunk as it arrives (chunked, unless the
    function gave a length), until its end, the call's deadline or the caller leaving.

    Nothing is buffered here: ``send`` waits while the caller's socket is full, and the
    upstream connection stops being read meanwhile (sless.backends.http1), so a slow
    caller holds the function back, not the gateway's memory. The caller leaving (its
    ``http.disconnect``) cancels the relay; leaving ``open_call`` early closes the
    upstream connection and the runtime stops the handler. Past the deadline the call
    fails as a timeout (the worker is stopped) and the caller sees the stream cut short
    (no last chunk): a failure after the head can only be told that way.
    """
    length = stream.content_length
    if length is not None and scope["method"] != "HEAD":
        out_headers.append((b"content-length", length))
    relay = asyncio.current_task()
    assert relay is not None
    gone = False

    async def watch() -> None:
        nonlocal gone
        while (await receive())["type"] != "http.disconnect":
            pass
        gone = True
        relay.cancel()

    watcher = asyncio.create_task(watch())
    try:
        async with asyncio.timeout(max(0.0, stream.deadline - time.monotonic())):
            call.responded = True
            await send(
                {"type": "http.response.start", "status": stream.status, "headers": out_headers}
            )
            while chunk := await stream.read():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                call.response_bytes += len(chunk)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    except asyncio.CancelledError:
        if not gone:
            raise
        relay.uncancel()
        call.error = "client_disconnected"
    finally:
        watcher.cancel()

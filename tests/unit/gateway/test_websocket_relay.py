"""The relay's end when both sides end in the same turn of the event loop: the caller left
(a close, or a frame its server refused), the gateway told the worker, and the worker's
connection ended before the relay looked. The caller's leaving decides: the session ends
quietly, not as a broken function (close 1011, error ``upstream_error``).

Seen under load through granian: a malformed frame ended the caller's session, and the
caller got 1011 from the relay instead of the server's own close.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from sless.backends.http1 import UpstreamBroken
from sless.backends.upgrade import CLOSE
from sless.gateway.websocket import _relay, _Tally


class _Worker:
    """A worker that ends its connection as soon as it is told the session closed."""

    def __init__(self) -> None:
        self.told: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.sent: list[int] = []

    async def send(self, kind: int, payload: bytes) -> None:
        self.sent.append(kind)
        if kind == CLOSE and not self.told.done():
            self.told.set_result(None)

    async def receive(self, limit: int) -> tuple[int, bytes]:
        await self.told
        raise UpstreamBroken("the worker closed the session")


def _call() -> Any:
    return SimpleNamespace(error=None, request_bytes=0, response_bytes=0)


async def _session_where_the_caller_leaves() -> tuple[int | None, Any, _Worker]:
    worker = _Worker()
    call = _call()

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.disconnect", "code": 1005}

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError(f"nothing goes to a caller that left: {message}")

    code = await _relay(call, _Tally(), worker, receive, send, idle_s=60)  # type: ignore[arg-type]
    return code, call, worker


async def test_a_caller_that_left_ends_the_session_though_the_worker_broke_that_turn() -> None:
    # the order of a set of finished tasks is arbitrary: repeat, so that a relay that takes
    # whichever it sees first fails here
    for _ in range(40):
        code, call, worker = await _session_where_the_caller_leaves()
        assert worker.sent == [CLOSE]
        assert code is None
        assert call.error is None


async def test_a_worker_that_breaks_on_its_own_is_still_an_upstream_error() -> None:
    # the other way round: the caller stays, the worker's connection ends: the relay raises
    # (sless.gateway.websocket._serve then closes with 1011 and records upstream_error)
    worker = _Worker()
    worker.told.set_result(None)
    stay = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await stay.wait()
        return {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError(f"unexpected: {message}")

    with pytest.raises(UpstreamBroken):
        await _relay(_call(), _Tally(), worker, receive, send, idle_s=60)  # type: ignore[arg-type]

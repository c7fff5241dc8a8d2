"""sless.gateway.admission on its own: the body deadline, and what a bodiless request skips.

A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 6.3),
so the gateway hands it the server's own ``receive`` and ``send`` (issue 32: the
deadline's ``asyncio.timeout`` was most of the wrapper's cost per call). These tests hold
that a request that *announces* a body, in either framing, is still cut when the body
does not come, and that the per-client counting holds for bodiless requests too.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sless.gateway.admission import Activity, Admission, AdmissionLimits

LIMITS = AdmissionLimits(
    body_timeout_s=0.05,
    body_min_rate_bytes_per_s=1,
    max_per_client=1,
    trusted_proxies=frozenset({"127.0.0.1"}),
)


async def _reads_its_body(scope: Any, receive: Any, send: Any) -> None:
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def _scope(headers: list[tuple[bytes, bytes]], client: str = "10.0.0.1") -> dict[str, Any]:
    return {"type": "http", "path": "/fn/a/b", "headers": headers, "client": (client, 4000)}


async def _serve(admission: Admission, scope: dict[str, Any], receive: Any) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await admission(scope, receive, send)
    return sent


async def _never() -> dict[str, Any]:
    """A client that announced a body and sends none of it."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    "framing",
    [(b"content-length", b"10"), (b"transfer-encoding", b"chunked"), (b"content-length", b"0")],
)
async def test_a_body_that_never_comes_is_cut_with_408(framing: tuple[bytes, bytes]) -> None:
    admission = Admission(_reads_its_body, LIMITS, Activity())
    sent = await _serve(admission, _scope([(b"host", b"x"), framing]), _never)
    assert sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]


async def test_a_bodiless_request_gets_the_servers_own_receive_and_is_counted() -> None:
    activity = Activity()
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(receive)
        seen.append(dict(activity.busy))
        await _reads_its_body(scope, receive, send)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent = await _serve(Admission(app, LIMITS, activity), _scope([]), receive)
    assert sent[0]["status"] == 200
    assert seen[0] is receive
    # in flight while the app ran, and its finish noted for the connection guard
    assert seen[1] == {("10.0.0.1", 4000): 1}
    assert activity.busy == {}
    assert ("10.0.0.1", 4000) in activity.finished_at


async def test_a_forwarded_client_over_its_cap_is_refused_without_a_body_too() -> None:
    """Behind a trusted proxy, bodiless requests count against their caller's cap."""
    release = asyncio.Event()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()
        await _reads_its_body(scope, receive, send)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    admission = Admission(slow, LIMITS, Activity())
    scope = _scope([(b"x-forwarded-for", b"203.0.113.7")], client="127.0.0.1")
    first = asyncio.create_task(_serve(admission, scope, receive))
    await asyncio.sleep(0)
    second = await _serve(admission, dict(scope, client=("127.0.0.1", 4001)), receive)
    assert second[0]["status"] == 503
    release.set()
    assert (await first)[0]["status"] == 200


async def test_a_stream_after_the_body_waits_for_the_caller_past_the_body_deadline() -> None:
    """Once the body is in, the deadline is over: a streamed answer then waits for the
    caller's ``http.disconnect`` for as long as it lasts (sless.gateway.streaming), and
    must not get a 408 or a disconnect of the wrapper's own after ``body_timeout_s``."""
    leave = asyncio.Event()
    messages = [{"type": "http.request", "body": b"0123456789", "more_body": False}]
    seen: list[Any] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        await leave.wait()
        return {"type": "http.disconnect", "from": "the caller"}

    async def streams(scope: Any, receive: Any, send: Any) -> None:
        await receive()  # the whole body
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"chunk", "more_body": True})
        seen.append(await receive())  # until the caller leaves

    async def caller_leaves_later() -> None:
        await asyncio.sleep(10 * LIMITS.body_timeout_s)  # well past the body deadline
        leave.set()

    limits = AdmissionLimits(
        body_timeout_s=LIMITS.body_timeout_s,
        body_min_rate_bytes_per_s=1 << 30,  # the 10 bytes add nothing to the deadline
        max_per_client=1,
        trusted_proxies=frozenset(),
    )
    task = asyncio.create_task(caller_leaves_later())
    sent = await _serve(
        Admission(streams, limits, Activity()),
        _scope([(b"content-length", b"10")]),
        receive,
    )
    await task
    assert seen == [{"type": "http.disconnect", "from": "the caller"}]
    assert [m.get("status") for m in sent] == [200, None]


async def test_the_invoke_path_reads_no_body_a_request_does_not_announce() -> None:
    """A GET without Content-Length or Transfer-Encoding costs no ``receive`` (one
    hand-over to the server and back per call); one that announces a body still has it
    read, whole, in either framing."""
    from sless.gateway.invoking import InvokeApp

    app = InvokeApp(lambda: None)

    async def must_not_be_called() -> dict[str, Any]:
        raise AssertionError("receive() was awaited for a request without a body")

    assert await app._read_body(_scope([(b"host", b"x")]), must_not_be_called, 100) == b""

    for framing in ((b"content-length", b"5"), (b"transfer-encoding", b"chunked")):
        messages = iter(
            [
                {"type": "http.request", "body": b"he", "more_body": True},
                {"type": "http.request", "body": b"llo", "more_body": False},
            ]
        )

        async def receive(messages: Any = messages) -> dict[str, Any]:
            return next(messages)

        body = await app._read_body(_scope([(b"host", b"x"), framing]), receive, 100)
        assert body == b"hello"

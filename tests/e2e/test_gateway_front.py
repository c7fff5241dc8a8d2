"""The gateway's front, as a caller and a tenant see it, with each HTTP server of ``sless up``.

``SLESS_GATEWAY_HTTP=express`` serves warm, whole ``/fn/...`` calls through a path of its
own (uvicorn's httptools protocol without ASGI) and everything else through the ASGI app,
as ``httptools`` serves it all. Nothing a caller or a function can observe may differ:
the headers that cross in each direction (sless.backends.headers, sless.gateway.pages),
the errors and their words (sless.models.endings), the invocation records, keep-alive and
pipelining, HEAD, framing refused, the tenant's rate limit. Each test runs against a real
``sless up`` per mode, over raw sockets where a client library would rewrite what is
checked (tests/e2e/front.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e import front as fr
from tests.e2e.front import Front, Reader, Response, connect, exchange, request
from tests.faults.harness import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


@pytest.fixture(scope="module", params=["httptools", "express"])
def front(request: pytest.FixtureRequest) -> Iterator[Front]:
    with fr.running(request.param) as running:
        yield running


def _call(
    front: Front,
    method: str,
    target: str,
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    source: str = "127.0.0.1",
) -> Response:
    """One request on a connection of its own; its invocation id is kept for test 7."""
    (response,) = exchange(front.up.port, request(method, target, headers, body), source=source)
    _seen(front, response)
    return response


def _seen(front: Front, response: Response) -> None:
    invocation_id = response.header("x-sless-invocation-id")
    if invocation_id is not None:
        front.seen[invocation_id] = response.status


def _gateway_made(response: Response) -> None:
    """What the gateway adds to every answer under ``/fn/``, whoever made it."""
    assert uuid.UUID(response.header("x-sless-invocation-id") or "")
    assert (response.header("content-security-policy") or "").startswith("sandbox ")
    if response.header("transfer-encoding") is None:
        assert response.header("content-length") == str(len(response.body))


def _echoed(response: Response) -> dict[str, Any]:
    assert response.status == 200, (response.status, response.body[:500])
    _gateway_made(response)
    echoed: dict[str, Any] = json.loads(response.body)
    assert echoed["invocation_id"] == response.header("x-sless-invocation-id")
    return echoed


def _error(response: Response, status: int) -> dict[str, Any]:
    assert response.status == status, (response.status, response.body[:500])
    _gateway_made(response)
    assert response.header("content-type") == "application/json"
    error: dict[str, Any] = json.loads(response.body)["error"]
    if "invocation_id" in error:
        assert error["invocation_id"] == response.header("x-sless-invocation-id")
    return error


def _record(front: Front, response: Response) -> Any:
    """The invocation record of ``response``'s call, once written."""
    invocation_id = response.header("x-sless-invocation-id")
    rows = wait_until(
        f"call {invocation_id} to be recorded",
        lambda: front.up.query(
            "SELECT status, error, reason, version FROM invocations WHERE id = $1::uuid",
            invocation_id,
        ),
        30,
    )
    return rows[0]


def _died(front: Front, response: Response, status: int, code: str, reason: str) -> None:
    """``response`` is the error of a call that died for ``reason``, recorded as such."""
    error = _error(response, status)
    assert error["code"] == code, error
    assert reason in error["message"], error
    record = _record(front, response)
    assert (record["status"], record["error"]) == (status, code)
    assert reason in record["reason"], record


# -- 1. a warm call ---------------------------------------------------------------------


def test_a_warm_get_reaches_the_function_with_its_query(front: Front) -> None:
    response = _call(front, "GET", f"/fn/{front.ns}/echo/a/b?x=1&y=two")
    echoed = _echoed(response)
    assert echoed["method"] == "GET"
    assert echoed["path"] == "/a/b"
    assert echoed["query"] == {"x": "1", "y": "two"}
    assert echoed["body"] is None
    assert response.header("content-type") == "application/json"
    # nothing more, nothing less (each once: ``header`` fails on a repeated one)
    names = {name for name, _ in response.headers}
    assert names == {
        "content-type",
        "content-length",
        "content-security-policy",
        "x-sless-invocation-id",
        "date",
        "server",
    }, response.headers
    assert all(response.header(name) for name in names)


def test_a_warm_post_body_reaches_the_function(front: Front) -> None:
    body = json.dumps({"greeting": "héllo", "n": [1, 2]}).encode()
    headers = [("Content-Type", "application/json")]
    echoed = _echoed(_call(front, "POST", f"/fn/{front.ns}/echo", headers, body))
    assert echoed["method"] == "POST"
    assert echoed["path"] == "/"
    assert echoed["body"] == {"greeting": "héllo", "n": [1, 2]}
    assert echoed["headers"]["content-length"] == str(len(body))
    text = _echoed(
        _call(front, "PUT", f"/fn/{front.ns}/echo", [("Content-Type", "text/plain")], b"x" * 5000)
    )
    assert text["body"] == "x" * 5000


# -- 2. headers towards the function (sless.backends.headers.from_caller) -----------------


def test_the_function_gets_no_credential_hop_by_hop_or_platform_header(front: Front) -> None:
    spoofed = "00000000-0000-4000-8000-000000000000"
    headers = [
        ("Authorization", f"Bearer {front.tenant.token}"),
        ("Cookie", "c=1"),
        ("Connection", "keep-alive, X-Foo"),
        ("X-Foo", "1"),
        ("Keep-Alive", "timeout=5"),
        ("TE", "trailers"),
        ("Trailer", "X-T"),
        ("Proxy-Authorization", "Basic eA=="),
        ("Proxy-Connection", "keep-alive"),
        ("Upgrade", "h2c"),  # without ``Connection: upgrade``: a plain hop-by-hop field
        ("X-Sless-Invocation-Id", spoofed),
        ("X-Sless-Deadline", "1"),
        ("X-Sless-Whatever", "1"),
        ("Sless-Trigger", "cron"),
        ("Expect", "100-continue"),
        ("X-Custom", "kept"),
    ]
    before = time.time()
    response = _call(front, "POST", f"/fn/{front.ns}/echo", headers, b"{}")
    echoed = _echoed(response)
    assert response.interim == [100]  # the gateway's own answer to Expect
    got = echoed["headers"]
    assert got["cookie"] == "c=1"  # not a credential of the platform: the function's own
    assert got["x-custom"] == "kept"
    assert got["x-forwarded-for"] == "127.0.0.1"
    for name in (
        "authorization",
        "connection",
        "x-foo",
        "keep-alive",
        "te",
        "trailer",
        "proxy-authorization",
        "proxy-connection",
        "upgrade",
        "sless-trigger",
        "expect",
    ):
        assert name not in got, (name, got)
    assert not [name for name in got if name.startswith("x-sless-")], got
    # the platform's own, not the caller's
    assert echoed["invocation_id"] != spoofed
    assert before < echoed["deadline"] <= time.time() + fr.TIMEOUT_S + 1


def test_the_function_sees_the_callers_address_as_forwarded_for(front: Front) -> None:
    """From an untrusted peer, a caller's own X-Forwarded-For is kept and the peer's address
    appended; from the trusted proxy (127.0.0.1 by default) its header names the caller."""
    xff = [("X-Forwarded-For", "203.0.113.9")]
    untrusted = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo", xff, source="127.0.0.9"))
    assert untrusted["headers"]["x-forwarded-for"] == "203.0.113.9, 127.0.0.9"
    proxied = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo", xff))
    assert proxied["headers"]["x-forwarded-for"] == "203.0.113.9"
    direct = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo", source="127.0.0.10"))
    assert direct["headers"]["x-forwarded-for"] == "127.0.0.10"


# -- 3. headers from the function (sless.backends.headers.from_function, gateway.pages) --


@pytest.mark.parametrize("at", ["", "@v"])
def test_the_caller_gets_no_origin_wide_hop_by_hop_or_platform_header(
    front: Front, at: str
) -> None:
    name = "echo" + (at + front.version.removeprefix("v") if at else "")
    response = _call(front, "GET", f"/fn/{front.ns}/{name}/page?mode=headers")
    assert response.status == 201
    _gateway_made(response)
    assert response.body == b"headers"
    assert response.all("set-cookie") == [f"a=b; HttpOnly; Path=/fn/{front.ns}/{name}"]
    assert response.header("x-kept") == "yes"
    # named by the function's ``Connection`` (RFC 9110 7.6.1): dropped by the runtime,
    # which drops that ``Connection`` itself (runtimes/python3.11/server.py)
    assert response.header("x-private") is None
    assert response.header("content-type") == "text/plain"
    for dropped in (
        "service-worker-allowed",
        "clear-site-data",
        "keep-alive",
        "proxy-authenticate",
        "x-sless-foo",
    ):
        assert response.header(dropped) is None, (dropped, response.headers)
    assert [k for k, _ in response.headers if k.startswith("x-sless-")] == ["x-sless-invocation-id"]


# -- which path served: the express path takes what it may, and only that ---------------


def _express_calls(front: Front) -> float:
    """``sless_gateway_express_calls_total`` from the gateway's metrics."""
    with front.up.admin() as admin:
        text = admin.get("/metrics").text
    for line in text.splitlines():
        if line.startswith("sless_gateway_express_calls_total "):
            return float(line.split()[1])
    raise AssertionError("no sless_gateway_express_calls_total in /metrics")


def _served_express(front: Front, method: str, target: str, *args: Any) -> tuple[bool, Response]:
    """Whether one call went through the express path (never, under another server)."""
    before = _express_calls(front)
    response = _call(front, method, target, *args)
    return _express_calls(front) == before + 1, response


def test_the_express_path_serves_warm_whole_calls_and_nothing_else(front: Front) -> None:
    express = front.mode == "express"
    ours = [("Authorization", f"Bearer {front.tenant.token}")]
    _call(front, "GET", f"/fn/{front.ns}/private", ours)  # the token resolved, then cached
    served = {
        "warm GET": _served_express(front, "GET", f"/fn/{front.ns}/echo/x?y=1"),
        "POST with a body": _served_express(front, "POST", f"/fn/{front.ns}/echo", [], b"{}"),
        "token cached": _served_express(front, "GET", f"/fn/{front.ns}/private", ours),
    }
    for what, (taken, response) in served.items():
        assert taken == express, what
        _echoed(response)
    async_call = [("X-Sless-Async", "true")]
    theirs = [("Authorization", f"Bearer {front.other.token}")]
    refused = {
        "asynchronous": _served_express(front, "POST", f"/fn/{front.ns}/echo", async_call, b"{}"),
        "escaped path": _served_express(front, "GET", f"/fn/{front.ns}/echo/a%20b"),
        "no token": _served_express(front, "GET", f"/fn/{front.ns}/private"),
        "another tenant's token": _served_express(front, "GET", f"/fn/{front.ns}/private", theirs),
        "no such function": _served_express(front, "GET", f"/fn/{front.ns}/nothing-here"),
    }
    for what, (taken, _) in refused.items():
        assert not taken, what
    # the queued call is recorded when it has run; a call of no function is answered
    # with an id and never recorded (test 17)
    queued = str(refused["asynchronous"][1].header("x-sless-invocation-id"))
    front.seen[queued] = 200
    invocation_id = str(refused["no such function"][1].header("x-sless-invocation-id"))
    front.seen.pop(invocation_id)
    front.unrecorded.append(invocation_id)


# -- 4. auth: token ---------------------------------------------------------------------


def test_a_token_function_needs_its_own_tenants_token(front: Front) -> None:
    path = f"/fn/{front.ns}/private"
    assert _error(_call(front, "GET", path), 401)["code"] == "unauthorized"
    theirs = [("Authorization", f"Bearer {front.other.token}")]
    assert _error(_call(front, "GET", path, theirs), 404)["code"] == "not_found"
    ours = [("Authorization", f"Bearer {front.tenant.token}")]
    echoed = _echoed(_call(front, "GET", path, ours))
    assert "authorization" not in echoed["headers"]


# -- 5, 6. calls that die (sless.models.endings) -----------------------------------------


def test_a_call_past_its_timeout_is_504_then_a_new_worker_serves(front: Front) -> None:
    first = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo"))
    started = time.monotonic()
    late = _call(front, "GET", f"/fn/{front.ns}/echo?mode=sleep&s={fr.TIMEOUT_S * 3}")
    took = time.monotonic() - started
    _died(front, late, 504, "timeout", f"timed out after {fr.TIMEOUT_S} s")
    assert fr.TIMEOUT_S <= took < fr.TIMEOUT_S * 3, took
    after = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo"))
    assert after["boot"] != first["boot"]  # the worker was stopped


def test_a_worker_that_exits_is_502_then_a_new_worker_serves(front: Front) -> None:
    first = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo"))
    crashed = _call(front, "GET", f"/fn/{front.ns}/echo?mode=exit")
    _died(front, crashed, 502, "bad_gateway", "worker exited with status 3")
    after = _echoed(_call(front, "GET", f"/fn/{front.ns}/echo"))
    assert after["boot"] != first["boot"]


def test_an_answer_past_the_response_limit_is_502_with_the_reason(front: Front) -> None:
    big = _call(front, "GET", f"/fn/{front.ns}/echo?mode=big&n={fr.MAX_RESPONSE_BYTES * 2}")
    _died(front, big, 502, "bad_gateway", "response larger than 64 KiB")
    under = _call(front, "GET", f"/fn/{front.ns}/echo?mode=big&n={fr.MAX_RESPONSE_BYTES // 2}")
    assert under.status == 200
    assert under.body == b"a" * (fr.MAX_RESPONSE_BYTES // 2)
    _gateway_made(under)


def test_a_status_line_no_server_may_send_is_502_not_a_hung_caller(front: Front) -> None:
    """The handler writes its own answer on the gateway's connection, with a status llhttp
    takes and no server may send: the call fails as a broken answer (502, recorded),
    never a caller left waiting or a tenant's in-flight count kept."""
    for status in ("999", "600"):
        response = _call(front, "GET", f"/fn/{front.ns}/echo?mode=raw&status={status}")
        assert _error(response, 502)["code"] == "bad_gateway"
        assert _record(front, response)["status"] == 502
        _echoed(_call(front, "GET", f"/fn/{front.ns}/echo"))


# -- 8, 9. keep-alive, pipelining, HEAD ---------------------------------------------------


def test_pipelined_requests_are_answered_in_order_on_one_connection(front: Front) -> None:
    path = f"/fn/{front.ns}/echo"
    body = b'{"n": 2}'
    pipelined = request("GET", f"{path}?n=1") + request(
        "POST", f"{path}?n=2", [("Content-Type", "application/json")], body
    )
    with connect(front.up.port) as sock:
        sock.sendall(pipelined)  # both in one write
        reader = Reader(sock)
        first, second = reader.response(), reader.response()
        sock.sendall(request("GET", f"{path}?n=3"))
        third = reader.response()
    for response in (first, second, third):
        _seen(front, response)
    echoed = [_echoed(r) for r in (first, second, third)]
    assert [e["query"]["n"] for e in echoed] == ["1", "2", "3"]
    assert [e["method"] for e in echoed] == ["GET", "POST", "GET"]
    assert echoed[1]["body"] == {"n": 2}
    assert len({e["invocation_id"] for e in echoed}) == 3


def test_head_is_answered_without_a_body(front: Front) -> None:
    path = f"/fn/{front.ns}/echo"
    with connect(front.up.port) as sock:
        # the GET after it is read as a response of its own: a body sent after HEAD's
        # head would be read as its status line
        sock.sendall(request("HEAD", path) + request("GET", f"{path}?after=head"))
        reader = Reader(sock)
        head = reader.response(head=True)
        after = reader.response()
    _seen(front, head)
    _seen(front, after)
    assert head.status == 200
    assert uuid.UUID(head.header("x-sless-invocation-id") or "")
    assert (head.header("content-security-policy") or "").startswith("sandbox ")
    # the worker answers HEAD without a body, and the gateway frames what it got
    assert head.header("content-length") == "0"
    assert _echoed(after)["query"] == {"after": "head"}


# -- 10. framing and paths -----------------------------------------------------------------


def test_content_length_with_transfer_encoding_is_400_and_closes(front: Front) -> None:
    smuggled = request("GET", f"/fn/{front.ns}/echo?smuggled=1")
    ambiguous = (
        request(
            "POST",
            f"/fn/{front.ns}/echo",
            [("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
        )
        + b"0\r\n\r\n"
        + smuggled
    )
    with connect(front.up.port) as sock:
        sock.sendall(ambiguous)
        reader = Reader(sock)
        refused = reader.response()
        assert refused.status == 400, refused
        assert reader.closed(), "the connection stayed open after the 400"


#: a target, and the path the function sees (None: 404, and whether the call is recorded:
#: only calls of a function that exists are)
ODD_PATHS = [
    # the path is passed on as the caller sent it: decoded once, by the function's runtime
    ("/fn/{ns}/echo/a%2Fb", "/a/b", True),
    ("/fn/{ns}/echo/%2561dmin", "/%61dmin", True),  # never twice (that made it /admin)
    ("/fn/{ns}/echo/a/../b", "/a/../b", True),  # not normalised
    ("/fn/{ns}/echo/%2e%2e/x", "/../x", True),
    # the route is read as sent: an escaped namespace or name is no function's, so what
    # a proxy in front sees is what is called
    ("/fn/{ns}%2Fecho", None, False),
    ("/fn/{ns}/ech%6F", None, False),
    ("/fn/{ns}/x/../echo", None, False),
    ("/fn/{ns}/ECHO", None, False),
    ("/fn/{ns}/echo@v999", None, True),
]


@pytest.mark.parametrize(("target", "path", "recorded"), ODD_PATHS)
def test_odd_paths_are_routed_alike(
    front: Front, target: str, path: str | None, recorded: bool
) -> None:
    response = _call(front, "GET", target.format(ns=front.ns))
    if path is not None:
        assert _echoed(response)["path"] == path
        return
    assert _error(response, 404)["code"] == "not_found"
    if not recorded:
        invocation_id = str(response.header("x-sless-invocation-id"))
        front.seen.pop(invocation_id)
        front.unrecorded.append(invocation_id)


# -- 11, 12. a caller gone mid-call, an asynchronous call ---------------------------------


def _records(front: Front, function: str) -> list[Any]:
    return front.up.query(
        "SELECT id::text, status, error, reason, version FROM invocations"
        " WHERE namespace = $1 AND function = $2 ORDER BY started_at",
        front.ns,
        function,
    )


def test_a_caller_gone_mid_call_leaves_the_platform_serving_and_recorded(front: Front) -> None:
    before = len(_records(front, "gone"))
    with connect(front.up.port) as sock:
        sock.sendall(request("GET", f"/fn/{front.ns}/gone?mode=sleep&s=1"))
        time.sleep(0.2)  # the call is running
    assert _echoed(_call(front, "GET", f"/fn/{front.ns}/echo?while=gone"))
    records = wait_until(
        "the abandoned call to be recorded",
        lambda: (rows := _records(front, "gone")) and len(rows) > before and rows,
        30,
    )
    assert len(records) == before + 1
    assert records[-1]["status"] == 200, records[-1]
    assert _echoed(_call(front, "GET", f"/fn/{front.ns}/gone?after=gone"))


def test_an_async_call_is_accepted_with_its_id_and_runs(front: Front) -> None:
    response = _call(front, "POST", f"/fn/{front.ns}/echo", [("X-Sless-Async", "true")], b"{}")
    assert response.status == 202, response
    _gateway_made(response)
    invocation_id = response.header("x-sless-invocation-id")
    assert json.loads(response.body) == {"invocation_id": invocation_id}
    ran = wait_until(
        "the queued call to run",
        lambda: front.up.query("SELECT status FROM invocations WHERE id = $1::uuid", invocation_id),
        60,
    )
    assert ran[0]["status"] == 200
    front.seen[str(invocation_id)] = 200  # as it ended, not the 202


# -- 14. a version by name ------------------------------------------------------------------


def test_a_version_is_called_by_name(front: Front) -> None:
    at = f"/fn/{front.ns}/echo@{front.version}/sub"
    echoed = _echoed(_call(front, "GET", at))
    assert echoed["path"] == "/sub"
    (row,) = wait_until(
        "the call to be recorded",
        lambda: front.up.query(
            "SELECT version FROM invocations WHERE id = $1::uuid", echoed["invocation_id"]
        ),
        30,
    )
    assert row["version"] == front.version


# -- 7. the records -------------------------------------------------------------------------


def test_every_call_above_is_recorded_with_its_status(front: Front) -> None:
    assert len(front.seen) >= 20, "the tests above ran first (file order)"
    wanted = sorted(front.seen)
    found: dict[str, int] = {}

    def recorded() -> bool:
        rows = front.up.query(
            "SELECT id::text, status FROM invocations WHERE id = ANY($1::uuid[])", wanted
        )
        found.update((row["id"], row["status"]) for row in rows)
        return len(found) == len(wanted)

    missing = lambda: {k: v for k, v in front.seen.items() if k not in found}  # noqa: E731
    wait_until("every call to be recorded", recorded, 30, show=missing)
    assert found == front.seen
    # recorded by now if ever (the writer kept the order of its queue)
    # the odd paths of no function, and one unknown function
    assert len(front.unrecorded) == 1 + sum(1 for *_, recorded in ODD_PATHS if not recorded)
    never = front.up.query(
        "SELECT id FROM invocations WHERE id = ANY($1::uuid[])", front.unrecorded
    )
    assert never == []


# -- 13. the tenant's rate limit ----------------------------------------------------------


def test_a_burst_past_the_tenants_rate_is_refused_429_with_retry_after(front: Front) -> None:
    path = f"/fn/{front.burster.namespace}/echo"
    statuses: list[int] = []
    refused: list[httpx.Response] = []
    with httpx.Client(base_url=front.up.url, timeout=30) as client:
        started = time.monotonic()
        for _ in range(fr.INVOKE_BURST * 3):
            response = client.get(path)
            statuses.append(response.status_code)
            if response.status_code == 429:
                refused.append(response)
        took = time.monotonic() - started
    allowed = fr.INVOKE_BURST + fr.INVOKE_RATE_PER_S * took + 1
    assert set(statuses) == {200, 429}, statuses
    assert statuses.count(200) <= allowed, (statuses.count(200), took)
    assert statuses[: fr.INVOKE_BURST // 2] == [200] * (fr.INVOKE_BURST // 2)
    for response in refused:
        assert int(response.headers["retry-after"]) >= 1
        assert response.headers["content-security-policy"].startswith("sandbox ")
        assert response.json()["error"]["code"] == "too_many_requests"

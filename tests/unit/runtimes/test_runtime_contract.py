"""The handler contract of ARCHITECTURE.md, checked over real HTTP against both runtimes,
each with a sync and an async handler."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from tests.unit.runtimes.harness import Server, start_server, stop_server


async def call(
    server: Server,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, CIMultiDict[str], bytes]:
    if server.socket_path is not None:
        connector: aiohttp.BaseConnector = aiohttp.UnixConnector(path=str(server.socket_path))
        url = f"http://worker{path}"
    else:
        connector = aiohttp.TCPConnector()
        url = f"http://127.0.0.1:{server.port}{path}"
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.request(method, url, data=body, headers=headers) as response,
    ):
        return response.status, CIMultiDict(response.headers), await response.read()


async def call_json(server: Server, method: str, path: str, **kw: Any) -> tuple[int, Any]:
    status, _, payload = await call(server, method, path, **kw)
    return status, json.loads(payload)


async def test_event_carries_method_path_query_headers_and_json_body(server: Server) -> None:
    deadline = time.time() + 12.5
    status, data = await call_json(
        server,
        "POST",
        "/a%20b/c?x=1&x=2&y=",
        body=b'{"k": [1, "two"]}',
        headers={
            "Content-Type": "application/json",
            "X-Custom": "Value",
            "X-Sless-Invocation-Id": "inv-123",
            "X-Sless-Deadline": f"{deadline:.3f}",
            "X-Sless-Internal": "must not reach the handler",
        },
    )
    assert status == 200
    event, context = data["event"], data["context"]
    assert event["method"] == "POST"
    assert event["path"] == "/a b/c"
    assert event["query"] == {"x": "2", "y": ""}
    assert event["multiQuery"] == {"x": ["1", "2"], "y": [""]}
    assert event["headers"]["x-custom"] == "Value"
    assert event["headers"]["content-type"] == "application/json"
    assert not [h for h in event["headers"] if h.startswith("x-sless-")]
    assert event["body"] == {"k": [1, "two"]}
    assert event["isBase64Encoded"] is False
    assert context["function"] == "fn1"
    assert context["namespace"] == "ns1"
    assert context["invocation_id"] == "inv-123"
    assert context["deadline"] == pytest.approx(deadline, abs=0.001)
    assert 10 < context["remaining"] <= 12.5


async def test_root_path_and_generated_invocation_id_and_default_deadline(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/")
    data = json.loads(payload)
    assert status == 200
    assert data["event"]["path"] == "/"
    assert data["event"]["body"] is None
    assert data["event"]["query"] == {}
    invocation_id = data["context"]["invocation_id"]
    assert len(invocation_id) >= 16
    assert headers["x-sless-invocation-id"] == invocation_id
    # SLESS_TIMEOUT_S=30 without an x-sless-deadline header
    assert data["context"]["deadline"] == pytest.approx(time.time() + 30, abs=2)


async def test_text_body_is_passed_as_text(server: Server) -> None:
    _, data = await call_json(
        server, "PUT", "/t", body="héllo {".encode(), headers={"Content-Type": "text/plain"}
    )
    assert data["event"]["body"] == "héllo {"
    assert data["event"]["isBase64Encoded"] is False


async def test_non_utf8_body_is_base64(server: Server) -> None:
    raw = b"\xff\xfe\x00binary"
    _, data = await call_json(
        server, "POST", "/b", body=raw, headers={"Content-Type": "application/octet-stream"}
    )
    assert data["event"]["isBase64Encoded"] is True
    assert base64.b64decode(data["event"]["body"]) == raw


async def test_invalid_json_body_is_a_400(server: Server) -> None:
    status, data = await call_json(
        server, "POST", "/j", body=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert status == 400
    assert data["error"]["code"] == "invalid_json"


async def test_plain_none_return_is_json_null(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/none")
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert payload == b"null"


async def test_status_code_response_with_text_body(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/text")
    assert status == 201
    assert headers["X-Custom"] == "yes"
    assert headers["Content-Type"].startswith("text/plain")
    assert payload == b"created"


async def test_a_field_the_answers_connection_names_is_dropped(server: Server) -> None:
    """RFC 9110 7.6.1: the runtime drops the handler's ``Connection``, so it drops what
    that field names too; the gateway, which never sees it, could not."""
    status, headers, payload = await call(server, "GET", "/named")
    assert (status, payload) == (200, b"named")
    assert headers["X-Kept"] == "yes"
    assert "X-Private" not in headers


async def test_status_code_response_with_object_body_is_json(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/json-body")
    assert status == 202
    assert headers["Content-Type"].startswith("application/json")
    assert json.loads(payload) == {"a": [1, 2]}


async def test_status_code_response_with_binary_body(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/binary")
    assert status == 200
    assert headers["Content-Type"] == "application/octet-stream"
    assert payload == b"\x00\x01\x02\xff"


async def test_handler_exception_is_a_500_without_traceback(server: Server) -> None:
    status, _, payload = await call(
        server, "GET", "/boom", headers={"X-Sless-Invocation-Id": "inv-boom-1"}
    )
    assert status == 500
    assert json.loads(payload) == {
        "error": {
            "code": "handler_error",
            "message": "the function raised an error",
            "invocation_id": "inv-boom-1",
        }
    }
    assert b"secret detail" not in payload
    # the traceback is in the function's log, every line tagged with the invocation id
    log = server.log_text()
    tagged = [line for line in log.splitlines() if line.startswith("[inv-boom-1] ")]
    assert any("secret detail 42" in line for line in tagged)
    assert len(tagged) >= 2


async def test_response_header_injection_is_refused(server: Server) -> None:
    status, headers, payload = await call(server, "GET", "/bad-header")
    assert status == 500
    assert "Set-Cookie" not in headers
    assert json.loads(payload)["error"]["code"] == "handler_error"


async def test_stdout_reaches_the_log_immediately(server: Server) -> None:
    status, _, _ = await call(server, "GET", "/print")
    assert status == 200
    assert "hello from the handler" in server.log_text()


async def _raw_exchange(server: Server, data: bytes, responses: int) -> list[bytes]:
    assert server.socket_path is not None
    reader, writer = await asyncio.open_unix_connection(str(server.socket_path))
    writer.write(data)
    await writer.drain()
    out = []
    for _ in range(responses):
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        out.append(head + await reader.readexactly(length))
    writer.close()
    return out


async def test_keep_alive_serves_several_requests_on_one_connection(server: Server) -> None:
    request = b"GET /one?n=1 HTTP/1.1\r\nHost: w\r\n\r\n"
    second = b"POST /two HTTP/1.1\r\nHost: w\r\nContent-Length: 2\r\n\r\nhi"
    first_reply, second_reply = await _raw_exchange(server, request + second, 2)
    assert first_reply.startswith(b"HTTP/1.1 200")
    assert b'"path":"/one"' in first_reply.replace(b" ", b"")
    assert b'"body":"hi"' in second_reply.replace(b" ", b"")


async def test_aiohttp_connection_is_reused(server: Server) -> None:
    assert server.socket_path is not None
    connector = aiohttp.UnixConnector(path=str(server.socket_path))
    ports = set()
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(3):
            async with session.get("http://worker/x") as response:
                assert response.status == 200
                await response.read()
                transport = response.connection.transport if response.connection else None
                ports.add(id(transport))
        # one pooled connection served all three requests
        assert sum(len(v) for v in connector._conns.values()) == 1


async def test_chunked_request_body(server: Server) -> None:
    request = (
        b"POST /c HTTP/1.1\r\nHost: w\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        b'4\r\n{"a"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n'
    )
    (reply,) = await _raw_exchange(server, request, 1)
    assert reply.startswith(b"HTTP/1.1 200")
    assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["event"]["body"] == {"a": 1}


@pytest.mark.parametrize("concurrency", [1, 3])
async def test_concurrency_limits_parallel_calls(
    runtime: str, concurrency: int, tmp_path: Path
) -> None:
    # the async flavour: a sync Node handler would block the whole event loop anyway
    srv = start_server(runtime, tmp_path, entrypoint="handler.ahandle", concurrency=concurrency)
    try:
        results = await asyncio.gather(*(call_json(srv, "GET", "/slow") for _ in range(3)))
    finally:
        stop_server(srv)
    spans = sorted((r[1]["start"], r[1]["end"]) for r in results)
    overlaps = sum(1 for a, b in itertools.pairwise(spans) if b[0] < a[1] - 0.05)
    if concurrency == 1:
        assert overlaps == 0, spans  # queued: one after the other
    else:
        assert overlaps == 2, spans  # all three at once


async def test_sync_python_handlers_run_in_a_thread_pool(tmp_path: Path) -> None:
    srv = start_server("python3.11", tmp_path, entrypoint="handler.handle", concurrency=3)
    try:
        results = await asyncio.gather(*(call_json(srv, "GET", "/slow") for _ in range(3)))
    finally:
        stop_server(srv)
    starts = [r[1]["start"] for r in results]
    assert max(starts) - min(starts) < 0.2  # ran side by side, not queued


async def test_tcp_port_mode(runtime: str, tmp_path: Path) -> None:
    srv = start_server(runtime, tmp_path, entrypoint="handler.handle", tcp=True)
    try:
        status, data = await call_json(srv, "GET", "/over-tcp?q=1")
    finally:
        stop_server(srv)
    assert status == 200
    assert data["event"]["path"] == "/over-tcp"
    assert data["event"]["query"] == {"q": "1"}

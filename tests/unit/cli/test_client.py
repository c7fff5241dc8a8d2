"""The CLI's HTTP client (``http.client`` underneath) against a real loopback server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import click
import pytest

from sless.cli.client import Client, error_message
from tests.conftest import free_port

SEEN: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        SEEN.append(
            {
                "method": self.command,
                "path": self.path,
                "auth": self.headers.get("Authorization"),
                "type": self.headers.get("Content-Type"),
                "body": body,
            }
        )
        if self.path.startswith("/missing"):
            payload = {"error": {"code": "not_found", "message": "no such function"}}
            status = 404
        else:
            payload = {"ok": True}
            status = 200
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    SEEN.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_sends_token_query_and_json(server: str) -> None:
    client = Client(server, "sl_t_secret")
    assert client.call("PUT", "/v1/x", json={"a": 1}, params={"limit": 5, "all": True}) == {
        "ok": True
    }
    sent = SEEN[-1]
    assert sent["method"] == "PUT"
    assert sent["path"] == "/v1/x?limit=5&all=true"
    assert sent["auth"] == "Bearer sl_t_secret"
    assert sent["type"] == "application/json"
    assert json.loads(sent["body"]) == {"a": 1}
    assert "sl_t_secret" not in repr(client)


def test_error_is_one_line_with_the_code(server: str) -> None:
    client = Client(server, "t")
    response = client.request("GET", "/missing")
    assert response.status_code == 404
    assert error_message(response) == "no such function (HTTP 404, not_found)"
    with pytest.raises(click.ClickException, match="no such function"):
        client.call("GET", "/missing")


def test_unreachable_gateway_says_so() -> None:
    client = Client(f"http://127.0.0.1:{free_port()}", "t")
    with pytest.raises(click.ClickException, match="cannot reach the sless gateway"):
        client.call("GET", "/v1/whoami")

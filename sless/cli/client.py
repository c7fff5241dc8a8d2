"""The CLI's view of a gateway: where it is, which token to send, and error handling.

``sless login`` stores the URL and token in ``<user config dir>/sless/config.json`` with
mode 0600; ``SLESS_URL`` / ``SLESS_TOKEN`` override it for one command.

The transport is the standard library's ``http.client``, not httpx: importing httpx (and
the rich console its ``__init__`` pulls in) took 0.3 s of every command's start, more than
the whole budget of a client-side command (bench/cli_start.py). ``Response`` offers the
few attributes the commands read.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import click

DEFAULT_URL = "http://127.0.0.1:8080"


def config_path() -> Path:
    if sys.platform == "linux":
        # platformdirs' answer on Linux, without its import (a fifth of a start)
        base = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
        return Path(base) / "sless" / "config.json"
    import platformdirs

    return Path(platformdirs.user_config_dir("sless", appauthor=False)) / "config.json"


def load_config() -> dict[str, str]:
    path = config_path()
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise click.ClickException(f"cannot read {path}: {e}") from None
    return {k: str(v) for k, v in data.items() if isinstance(v, str)}


def save_config(values: dict[str, str]) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # create with 0600 before writing the token into it
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(values, f, indent=2)
    os.chmod(path, 0o600)
    return path


class Response:
    """A read answer: status, headers (case-insensitive ``get``) and body."""

    def __init__(self, status_code: int, headers: http.client.HTTPMessage, content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.content = content

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


class Client:
    def __init__(self, url: str, token: str | None, *, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise click.ClickException(f"not an http(s) URL: {self.url}")
        self._parts = parts
        self._namespace: str | None = None

    def __repr__(self) -> str:
        return f"Client(url={self.url!r}, token='…')"

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        host, port = self._parts.hostname or "", self._parts.port
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout)
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def open(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = -1.0,
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send a request and return the open answer (for streams); the caller closes it.

        ``timeout`` is per socket operation; None waits for ever (a followed stream)."""
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None}
        target = self._parts.path.rstrip("/") + path
        if query:
            target += ("&" if "?" in target else "?") + urlencode(query)
        sent = {"User-Agent": "sless-cli", **(headers or {})}
        if self.token:
            sent["Authorization"] = f"Bearer {self.token}"
        body: bytes | None = None
        if json is not None:
            body = _json_dumps(json)
            sent.setdefault("Content-Type", "application/json")
        elif content is not None:
            body = content.encode() if isinstance(content, str) else content
        connection = self._connection(self.timeout if timeout == -1.0 else timeout)
        try:
            connection.request(method, target, body=body, headers=sent)
            return connection, connection.getresponse()
        except (ConnectionRefusedError, socket.gaierror):
            connection.close()
            raise click.ClickException(
                f"cannot reach the sless gateway at {self.url} (is `sless up` running?)"
            ) from None
        except TimeoutError:
            connection.close()
            raise click.ClickException(
                f"the gateway at {self.url} did not answer in time"
            ) from None
        except (OSError, http.client.HTTPException) as e:
            connection.close()
            raise click.ClickException(f"the gateway at {self.url} failed: {e}") from None

    def request(self, method: str, path: str, **kwargs: Any) -> Response:
        connection, answer = self.open(method, path, **kwargs)
        try:
            return Response(answer.status, answer.headers, answer.read())
        except (OSError, http.client.HTTPException) as e:
            raise click.ClickException(f"the gateway at {self.url} failed: {e}") from None
        finally:
            connection.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        if response.status_code >= 400:
            raise click.ClickException(error_message(response))
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

    def pages(
        self, path: str, key: str, params: dict[str, Any] | None = None
    ) -> Iterator[list[Any]]:
        """Every page of a list, following ``next_cursor`` until the last page."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        while True:
            data = self.call("GET", path, params=query)
            yield list(data[key])
            cursor = data.get("next_cursor")
            if not cursor:
                return
            query["cursor"] = cursor

    def list_all(self, path: str, key: str, params: dict[str, Any] | None = None) -> list[Any]:
        """The whole list, every page of it (``limit`` is the page size)."""
        return [
            item
            for page in self.pages(path, key, {"limit": 1000, **(params or {})})
            for item in page
        ]

    @property
    def namespace(self) -> str:
        if self._namespace is None:
            me = self.call("GET", "/v1/whoami")
            if not me.get("namespace"):
                raise click.ClickException("this command needs a tenant token, not the admin token")
            self._namespace = str(me["namespace"])
        return self._namespace

    def ns_path(self, suffix: str) -> str:
        return f"/v1/namespaces/{self.namespace}/{suffix.lstrip('/')}"


def error_message(response: Response) -> str:
    try:
        error = response.json()["error"]
        return f"{error['message']} (HTTP {response.status_code}, {error['code']})"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}: {response.text[:200]}"


def make_client(url: str | None, token: str | None) -> Client:
    config = load_config()
    url = url or os.environ.get("SLESS_URL") or config.get("url") or DEFAULT_URL
    token = token or os.environ.get("SLESS_TOKEN") or config.get("token")
    if not token:
        raise click.ClickException("not logged in: run `sless login --url URL --token TOKEN`")
    return Client(url, token)


def make_admin_client(url: str | None, token: str | None) -> Client:
    config = load_config()
    url = url or os.environ.get("SLESS_URL") or config.get("url") or DEFAULT_URL
    token = token or os.environ.get("SLESS_ADMIN_TOKEN") or config.get("admin_token")
    if not token:
        raise click.ClickException(
            "admin commands need the provider admin token:"
            " set SLESS_ADMIN_TOKEN or pass --admin-token"
        )
    return Client(url, token)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json_dumps(value: Any) -> bytes:
    return json.dumps(value).encode()

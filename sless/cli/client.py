"""The CLI's view of a gateway: where it is, which token to send, and error handling.

``sless login`` stores the URL and token in ``<user config dir>/sless/config.json`` with
mode 0600; ``SLESS_URL`` / ``SLESS_TOKEN`` override it for one command.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import httpx
import platformdirs

DEFAULT_URL = "http://127.0.0.1:8080"


def config_path() -> Path:
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


class Client:
    def __init__(self, url: str, token: str | None, *, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
        self._namespace: str | None = None

    def __repr__(self) -> str:
        return f"Client(url={self.url!r}, token='…')"

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.ConnectError:
            raise click.ClickException(
                f"cannot reach the sless gateway at {self.url} (is `sless up` running?)"
            ) from None
        except httpx.TimeoutException:
            raise click.ClickException(
                f"the gateway at {self.url} did not answer in time"
            ) from None
        return response

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


def error_message(response: httpx.Response) -> str:
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

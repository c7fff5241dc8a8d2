"""``sless invoke``: one call of a function through its public URL, as any client makes it.

The body comes from ``--data`` (text, ``@FILE`` or ``-`` for stdin); ``-H`` adds headers.
``--async`` queues the call (``X-Sless-Async: true``) and prints its invocation id;
``--wait`` then follows the invocation record until the call has ended and prints its
result, exiting 1 when it failed. ``--retries N`` (with ``--async``) asks for at most N
retries of a failing call (``X-Sless-Retries``; the platform caps it at its own setting).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from sless.cli.client import Client

#: states of an asynchronous call that will not change any more
_ENDED = {"succeeded", "failed", "dead", "interrupted"}


def read_body(data: str) -> bytes:
    if data == "-":
        return sys.stdin.buffer.read()
    if data.startswith("@"):
        try:
            return Path(data[1:]).read_bytes()
        except OSError as e:
            raise click.ClickException(f"--data {data}: {e.strerror}") from None
    return data.encode()


def parse_headers(headers: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for header in headers:
        key, sep, value = header.partition(":")
        if not sep or not key.strip():
            raise click.ClickException(f"-H takes 'Name: value', not {header!r}")
        out[key.strip()] = value.strip()
    return out


def call(
    client: Client,
    name: str,
    *,
    subpath: str,
    body: str | None,
    headers: tuple[str, ...],
    is_async: bool,
    wait_timeout: float | None,
    retries: int | None = None,
) -> None:
    if retries is not None and not is_async:
        raise click.UsageError("--retries is for --async calls (a direct call is tried once)")
    target = f"/fn/{client.namespace}/{name}/{subpath.lstrip('/')}".rstrip("/")
    sent = parse_headers(headers)
    if is_async:
        sent["X-Sless-Async"] = "true"
    if retries is not None:
        sent["X-Sless-Retries"] = str(retries)
    if body is None:
        response = client.request("GET", target, headers=sent)
    else:
        content = read_body(body)
        if not any(k.lower() == "content-type" for k in sent):
            sent["Content-Type"] = "application/json" if _is_json(content) else "text/plain"
        response = client.request("POST", target, content=content, headers=sent)
    if response.status_code >= 400 or not is_async or wait_timeout is None:
        click.echo(response.text)
        if response.status_code >= 400:
            sys.exit(1)
        return
    invocation_id = response.json()["invocation_id"]
    click.echo(f"queued {invocation_id}", err=True)
    ended = _wait(client, invocation_id, wait_timeout)
    result = ended.get("result")
    click.echo(json.dumps(result) if not isinstance(result, str) else result)
    if ended["state"] != "succeeded":
        click.echo(f"{ended['state']}: {ended.get('message') or ''}".rstrip(": "), err=True)
        sys.exit(1)


def _wait(client: Client, invocation_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    path = client.ns_path(f"invocations/{invocation_id}")
    while True:
        found: dict[str, Any] = client.call("GET", path)
        if found.get("state") in _ENDED:
            return found
        if time.monotonic() > deadline:
            raise click.ClickException(f"{invocation_id} is still {found.get('state')}")
        time.sleep(0.3)


def _is_json(content: bytes) -> bool:
    try:
        json.loads(content)
    except ValueError:
        return False
    return True

"""``sless logs``: the last lines of a function's output, and ``-f`` to keep following it.

The API answers the last bytes of the log (``?tail=``, at most 1 MiB); ``--tail N``
counts lines, so this asks for enough bytes and keeps the last N lines. ``-f`` reads the
API's stream instead (``GET .../logs/stream``, server-sent events, one line each): the
last N lines as they are, then every new line after the time the gateway read it (UTC)
and, where the line names one, its invocation id. The gateway ends a stream after an
hour; this opens the next one.
"""

from __future__ import annotations

import json
from typing import Any

import click

from sless.cli.client import Client, Response, error_message

#: the most the API answers at once
_MAX_BYTES = 1024 * 1024


def last_lines(client: Client, name: str, lines: int) -> str:
    path = client.ns_path(f"functions/{name}/logs")
    text: str = client.call("GET", path, params={"tail": min(_MAX_BYTES, max(lines, 1) * 400)})
    kept = text.splitlines(keepends=True)[-lines:] if lines > 0 else []
    return "".join(kept)


def render(data: dict[str, Any]) -> str:
    """One line of the stream as printed: ``03:50:01.123Z [invocation id] line``."""
    line = str(data.get("line", ""))
    stamp = data.get("time")
    if not stamp:  # the backlog: the log keeps no times
        return line
    call = data.get("invocation_id")
    shown = str(stamp)[11:] if len(str(stamp)) > 11 else str(stamp)
    if call and f"[{call}]" not in line and f"call {call}" not in line:
        return f"{shown} [{call}] {line}"
    return f"{shown} {line}"


def follow_logs(client: Client, name: str, lines: int) -> None:
    path = client.ns_path(f"functions/{name}/logs/stream")
    tail = lines
    try:
        while True:
            connection, answer = client.open("GET", path, params={"tail": tail}, timeout=None)
            try:
                if answer.status >= 400:
                    response = Response(answer.status, answer.headers, answer.read())
                    raise click.ClickException(error_message(response))
                for raw in answer:
                    if raw.startswith(b"data: "):
                        click.echo(render(json.loads(raw[len(b"data: ") :])))
            finally:
                connection.close()
            tail = 0  # the next stream goes on from here
    except KeyboardInterrupt:
        return

"""``sless logs``: the last lines of a function's output, and ``-f`` to keep following it.

The API answers the last bytes of the log (``?tail=``, at most 1 MiB); ``--tail N``
counts lines, so this asks for enough bytes and keeps the last N lines; ``--since 10m``
asks for what was written in the last ten minutes (``?since=``). ``-f`` reads the
API's stream instead (``GET .../logs/stream``, server-sent events, one line each): the
last N lines (after the time they were written, where the platform knows it), then every
new line after the time the gateway read it (UTC)
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


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def since_time(text: str) -> str:
    """``10m`` (s, m, h, d ago) or an ISO 8601 time, as the ISO 8601 time the API takes."""
    from datetime import UTC, datetime, timedelta

    amount, unit = text[:-1], text[-1:]
    if amount.isdigit() and unit in _UNITS:
        start = datetime.now(UTC) - timedelta(seconds=int(amount) * _UNITS[unit])
        return start.isoformat()
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        raise click.ClickException(
            f"--since takes 10m, 2h, 30s, 1d or an ISO 8601 time, not {text!r}"
        ) from None


def last_lines(client: Client, name: str, lines: int, *, since: str | None = None) -> str:
    path = client.ns_path(f"functions/{name}/logs")
    size = min(_MAX_BYTES, max(lines, 1) * 400)
    text: str = client.call("GET", path, params={"tail": size, "since": since})
    kept = text.splitlines(keepends=True)[-lines:] if lines > 0 else []
    return "".join(kept)


def render(data: dict[str, Any]) -> str:
    """One line of the stream as printed: ``03:50:01.123Z [invocation id] line``."""
    line = str(data.get("line", ""))
    stamp = data.get("time")
    if not stamp:  # a backlog line written before the platform's marks: no time
        return line
    call = data.get("invocation_id")
    shown = str(stamp)[11:] if len(str(stamp)) > 11 else str(stamp)
    if call and f"[{call}]" not in line and f"call {call}" not in line:
        return f"{shown} [{call}] {line}"
    return f"{shown} {line}"


def follow_logs(client: Client, name: str, lines: int, *, since: str | None = None) -> None:
    path = client.ns_path(f"functions/{name}/logs/stream")
    tail = lines
    try:
        while True:
            params = {"tail": tail, "since": since}
            connection, answer = client.open("GET", path, params=params, timeout=None)
            try:
                if answer.status >= 400:
                    response = Response(answer.status, answer.headers, answer.read())
                    raise click.ClickException(error_message(response))
                for raw in answer:
                    if raw.startswith(b"data: "):
                        click.echo(render(json.loads(raw[len(b"data: ") :])))
            finally:
                connection.close()
            tail, since = 0, None  # the next stream goes on from here
    except KeyboardInterrupt:
        return

"""``sless logs``: the last lines of a function's output, and ``-f`` to keep following it.

The API answers the last bytes of the log (``?tail=``, at most 1 MiB); ``--tail N``
counts lines, so this asks for enough bytes and keeps the last N lines. ``-f`` asks again
every half second and prints what follows the text it printed last (found by its last
bytes); when that text has left the window (a burst of output, or the log was trimmed),
it prints the whole window after a marker, so nothing is skipped silently.
"""

from __future__ import annotations

import time

import click

from sless.cli.client import Client

#: the most the API answers at once
_MAX_BYTES = 1024 * 1024
#: the bytes that find where the previous read ended
_ANCHOR = 2048
_POLL_S = 0.5


def _tail(client: Client, name: str, size: int) -> str:
    text: str = client.call("GET", client.ns_path(f"functions/{name}/logs"), params={"tail": size})
    return text


def last_lines(client: Client, name: str, lines: int) -> str:
    text = _tail(client, name, min(_MAX_BYTES, max(lines, 1) * 400))
    kept = text.splitlines(keepends=True)[-lines:] if lines > 0 else []
    return "".join(kept)


def follow_logs(client: Client, name: str, lines: int) -> None:
    seen = _tail(client, name, _MAX_BYTES)  # one read: what is shown is what follows
    kept = seen.splitlines(keepends=True)[-lines:] if lines > 0 else []
    click.echo("".join(kept), nl=False)
    try:
        while True:
            time.sleep(_POLL_S)
            now = _tail(client, name, _MAX_BYTES)
            new = _after(seen, now)
            if new:
                click.echo(new, nl=False)
            seen = now
    except KeyboardInterrupt:
        return


def _after(before: str, now: str) -> str:
    """What ``now`` has past the end of ``before`` (both are tails of one growing log)."""
    if now.startswith(before):  # the log is under the window: exact
        return now[len(before) :]
    # both are 1 MiB windows of a longer log: align on the last bytes printed (a log of
    # one line repeated may align short: the API gives no offsets)
    anchor = before[-_ANCHOR:]
    if not anchor:
        return now
    at = now.rfind(anchor)
    if at >= 0:
        return now[at + len(anchor) :]
    return "--- (more output than one read: the last 1 MiB follows) ---\n" + now

"""A function's logs: the last bytes (``GET .../logs``), and the log followed as it grows
(``GET .../logs/stream``: server-sent events, what ``sless logs -f`` and the console read).

The stream sends the last ``tail`` lines, then every line the function writes, one event
each: ``data: {"time": ..., "invocation_id": ..., "line": ...}``. ``time`` is when the
gateway read the line (it reads twice a second); for the first ``tail`` lines, when it
was written where the backend knows it (embedded mode remembers its recent writes'
times, ``sless.backends.local.logfiles``), else ``null``. ``invocation_id`` is the call
a line names: the runtime servers prefix every line a call writes to stdout or stderr
with ``[<invocation id>] `` and the platform's own lines read ``[sless] call <invocation
id>: ...``; output written outside a call (at import) names none (``null``).

Both modes answer ``backend.logs`` with the tail of the log, so the stream is made here
from successive tails: what a read has past the end of the text the previous read
returned (found by its last bytes; when the log grew by more than one read between two
reads, a marker line says output was skipped), for each pod's part in Kubernetes mode.
Each open stream costs a read every half second, so a namespace holds at most
``MAX_STREAMS`` at once (429 past them), and a stream ends after ``STREAM_S`` (a client
reconnects). The count is per gateway process. A stream open when the gateway stops is
cut after ``SLESS_GATEWAY_SHUTDOWN_GRACE_S``, as any request still running is. ``since``
(``sless logs --since 10m``) is passed to the backend, which knows when lines were
written as far as its mode can tell.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, StreamingResponse

from sless.errors import SlessError
from sless.gateway.deps import BackendDep, NameDep, NamespaceDep
from sless.gateway.schema import ERRORS

router = APIRouter(prefix="/v1", responses=ERRORS)

#: bytes of the log one read of the stream looks at
WINDOW = 256 * 1024
#: the last bytes of the previous read, found again in the next one
_ANCHOR = 2048
POLL_S = 0.5
#: streams one namespace may hold open at once
MAX_STREAMS = 8
#: how long one stream lasts; the client opens another
STREAM_S = 3600.0
#: a comment sent when nothing was written for this long, so idle proxies keep the stream
_KEEPALIVE_S = 15.0
SKIPPED = "[more output than one read: lines were skipped]"

_INVOCATION = re.compile(
    r"^(?:\[sless\] call |\[)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})[\]:]"
)
#: the header of one pod's part of a log in Kubernetes mode (``pod_logs``)
_SECTION = re.compile(r"^==> (\S+) <==$", re.MULTILINE)
_open: Counter[str] = Counter()


class TooManyStreams(SlessError):
    status = 429
    code = "too_many_streams"


Since = Annotated[
    datetime | None,
    Query(
        description="only what was written at or after this time (embedded mode: as far as"
        " the gateway remembers its writes, since it started; else the whole tail)"
    ),
]


@router.get("/namespaces/{ns}/functions/{name}/logs", response_class=PlainTextResponse)
async def get_logs(
    ns: NamespaceDep,
    name: NameDep,
    backend: BackendDep,
    tail: Annotated[int, Query(ge=1, le=1024 * 1024)] = 64 * 1024,
    since: Since = None,
) -> str:
    return await backend.logs(ns, name, tail_bytes=tail, since=_epoch(since))


def _epoch(since: datetime | None) -> float | None:
    """A time without a zone is UTC's."""
    if since is None:
        return None
    return (since if since.tzinfo else since.replace(tzinfo=UTC)).timestamp()


@router.get(
    "/namespaces/{ns}/functions/{name}/logs/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
            "description": "one event per line: "
            '`data: {"time": ..., "invocation_id": ..., "line": ...}`',
        }
    },
)
async def stream_logs(
    request: Request,
    ns: NamespaceDep,
    name: NameDep,
    backend: BackendDep,
    tail: Annotated[int, Query(ge=0, le=10_000, description="lines sent first")] = 100,
    since: Since = None,
) -> StreamingResponse:
    """Follow the function's log: its last ``tail`` lines (written at or after ``since``),
    then each new line."""
    await backend.get_function(ns, name)  # NotFound before the stream starts
    if _open[ns] >= MAX_STREAMS:
        raise TooManyStreams(f"at most {MAX_STREAMS} log streams per namespace at once")
    return StreamingResponse(
        _events(request, backend, ns, name, tail, _epoch(since)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _events(
    request: Request, backend: BackendDep, ns: str, name: str, tail: int, since: float | None
) -> AsyncIterator[bytes]:
    # counted here, where the ``finally`` that gives it back is sure to run (a response
    # cancelled before its body started never enters this generator)
    _open[ns] += 1
    try:
        if _open[ns] > MAX_STREAMS:  # others opened meanwhile
            yield event(f"[at most {MAX_STREAMS} log streams per namespace at once]", None)
            return
        recent = await backend.log_lines(ns, name, tail_bytes=WINDOW)
        # what the stream has sent or skipped: the same read, so no line is lost between
        seen = "".join(line + "\n" for line, _ in recent)
        if since is not None:
            recent = await backend.log_lines(ns, name, tail_bytes=WINDOW, since=since)
        for line, at in recent[-tail:] if tail > 0 else []:
            yield event(line, None if at is None else _stamp(at))
        ends = time.monotonic() + STREAM_S
        quiet_since = time.monotonic()
        while time.monotonic() < ends and not await request.is_disconnected():
            await asyncio.sleep(POLL_S)
            now = await backend.logs(ns, name, tail_bytes=WINDOW)
            if _SECTION.search(now):  # one part per pod, newest first
                new, seen = grown(seen, now), now
            else:
                new = after(seen, now)
                # a line still being written is sent once it is whole
                partial = len(new) - len(_whole_lines(new))
                seen = now[: len(now) - partial]
                new = new[: len(new) - partial]
            stamp = _stamp(time.time())
            for line in new.splitlines():
                yield event(line, stamp)
            if new:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > _KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield b": keep-alive\n\n"
    finally:
        _open[ns] -= 1
        if _open[ns] <= 0:
            del _open[ns]


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _whole_lines(text: str) -> str:
    """``text`` up to its last newline."""
    return text[: text.rfind("\n") + 1]


def event(line: str, stamp: str | None) -> bytes:
    """One server-sent event of one log line."""
    found = _INVOCATION.match(line)
    data = {"time": stamp, "invocation_id": found[1] if found else None, "line": line}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def grown(before: str, now: str) -> str:
    """``after`` for each part of a log made of parts (Kubernetes mode: one per pod,
    ``==> POD <==``, newest pod first, so new lines land in the middle of the text)."""
    old = _sections(before)
    return "".join(after(old.get(header, ""), body) for header, body in _sections(now).items())


def _sections(text: str) -> dict[str, str]:
    parts = _SECTION.split(text)  # [before the first header, header, body, header, body...]
    found = {"": parts[0]}
    for at in range(1, len(parts) - 1, 2):
        body = parts[at + 1].removeprefix("\n")
        if at + 2 < len(parts):
            body = body.removesuffix("\n")  # the newline that joins two parts
        found[parts[at]] = body
    return found


def after(before: str, now: str) -> str:
    """What ``now`` has past the end of ``before`` (both tails of one growing log)."""
    if now.startswith(before):  # the log is under the window: exact
        return now[len(before) :]
    anchor = before[-_ANCHOR:]
    if not anchor:
        return now
    at = now.rfind(anchor)
    if at >= 0:
        return now[at + len(anchor) :]
    return SKIPPED + "\n" + now

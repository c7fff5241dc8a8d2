"""Functions' stdout/stderr in embedded mode: one append-only file per function, and the
tenant's bound on all of them.

Workers never hold a log file: they write into a pipe (``sink``) that the platform's log
pump (``logpump``) carries to ``write``, and the platform's own lines (why a call died)
come through ``append``. Every write makes room first, within two bounds:

- per function: ``log_max_bytes`` (``SLESS_SANDBOX_LOG_MAX_BYTES``);
- per tenant: ``max_log_bytes`` (``SLESS_LIMITS_MAX_LOG_BYTES``, or the tenant's own
  limit): when the tenant's files would add up to more, each file over its share (the room
  left, divided among the tenant's files) keeps only its newest part.

Making room keeps the newest lines and drops the oldest, starting with the line after the
cut, and writes a marker line in their place: a tenant that logs without end loses its
own oldest output, never the platform's disk, and at no moment holds more than its limit.
``enforce`` (every ``ENFORCE_INTERVAL_S``) applies a limit the provider lowered to the
files already there.

The files keep no times; ``marks`` remembers, in memory, when each of a file's last
``MAX_MARKS`` writes ended (its size then), so that ``tail(since=)`` reads from the first
write at or after a time (``sless logs --since 10m``), and ``lines`` gives each line the
time of the write that ended it. A trim moves the bytes and drops the file's marks, as
does a restart: the answer is then the whole window, never less, and a line written
before the marks reach back has no time (none is made up).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sless.backends.local.logpump import FunctionLog, LogPump

log = logging.getLogger(__name__)

#: how often the backend trims the logs to their bounds, and re-reads the tenants' limits
ENFORCE_INTERVAL_S = 0.5
_LIMITS_INTERVAL_S = 5.0
MARKER = b"[earlier output dropped: log limit reached]\n"
#: log files kept open for appending (the most recently written)
MAX_OPEN = 64
#: writes remembered per file for ``tail(since=)``
MAX_MARKS = 4096


@dataclass
class _Held:
    fd: int
    #: bytes in the file, as our writes left it (None: unknown since a trim)
    size: int | None


class LogFiles:
    def __init__(
        self,
        root: Path,
        *,
        max_bytes: int,
        tenant_max_bytes: int,
        rate: int,
        burst: int,
    ) -> None:
        self.root = root
        self.max_bytes = max_bytes
        #: the platform's per-tenant bound; a tenant's own limit wins (``limits``)
        self.tenant_max_bytes = tenant_max_bytes
        #: the tenants' own limits, as last read (``keep_bounded``)
        self.limits: dict[str, int] = {}
        self.pump = LogPump(self.write, rate=rate, burst=burst)
        #: every change of the files (writes, trims, removals) holds it
        self._lock = threading.Lock()
        #: bytes on disk per tenant, as the writes left them (dropped when unsure)
        self._usage: dict[str, int] = {}
        #: the files written to lately, kept open with their sizes (``_held``)
        self._open: OrderedDict[Path, _Held] = OrderedDict()
        #: file → (its size after a write, the write's time), oldest first
        self._marks: dict[Path, deque[tuple[int, float]]] = {}
        #: file → its size before the first of its marks
        self._marked_from: dict[Path, int] = {}

    def path(self, namespace: str, name: str) -> Path:
        return self.root / namespace / f"{name}.log"

    def sink(self, namespace: str, name: str) -> FunctionLog:
        """Where the function's workers write their stdout and stderr."""
        return FunctionLog(self.pump, namespace, name)

    def remove(self, namespace: str, name: str) -> None:
        with self._lock:
            path = self.path(namespace, name)
            held = self._open.pop(path, None)
            if held is not None:
                os.close(held.fd)
            path.unlink(missing_ok=True)
            self._marks.pop(path, None)
            self._marked_from.pop(path, None)
            self._usage.pop(namespace, None)

    def usage(self, namespace: str) -> int:
        """Bytes of the namespace's logs on disk now, between two writes: a write trims the
        tenant's files before it appends, so a sum of sizes read while one runs could count
        a file before its trim and another after its append, more than was ever on disk."""
        with self._lock:
            return self._on_disk(namespace)

    def _on_disk(self, namespace: str) -> int:
        """``usage``, called with ``_lock`` held."""
        return sum(size for _, size in _sizes(self.root / namespace))

    def append(self, namespace: str, name: str, text: str) -> None:
        """Add a line of the platform's own (why a call died...) to a function's log, after
        what its workers wrote, within the same bounds as their output."""
        self.pump.flush(namespace, name)
        self.write(namespace, name, text.rstrip("\n").encode("utf-8", "replace") + b"\n")

    def write(self, namespace: str, name: str, data: bytes) -> None:
        """Append ``data`` to the function's log, dropping its oldest lines (or the tenant's
        others') first where it would not fit."""
        limit = self.limits.get(namespace, self.tenant_max_bytes)
        # one write never takes more than half of a bound: its newest bytes
        data = data[-(min(self.max_bytes, limit) // 2) :]
        path = self.path(namespace, name)
        with self._lock:
            held = self._held(path)
            size = held.size if held.size is not None else os.fstat(held.fd).st_size
            if size + len(data) > self.max_bytes:
                _keep_newest(path, self.max_bytes)
                self._usage.pop(namespace, None)
                held.size = None
                self._marks.pop(path, None)
                self._marked_from.pop(path, None)
            usage = self._usage.get(namespace)
            if usage is None:
                usage = self._on_disk(namespace)
            if usage + len(data) > limit:
                usage = self._make_room(namespace, limit, len(data))
            written = os.write(held.fd, data)
            end = size + written if held.size is not None else os.fstat(held.fd).st_size
            held.size = end
            self._usage[namespace] = usage + written
            marks = self._marks.get(path)
            if marks is None:
                marks = self._marks[path] = deque(maxlen=MAX_MARKS)
                self._marked_from[path] = end - written
            marks.append((end, time.time()))

    def _held(self, path: Path) -> _Held:
        """The file open for appending (the newest ``MAX_OPEN`` stay open: a write is then
        one ``write(2)``, not a path lookup, an open and a close). Called with ``_lock``.

        Trimming a file (``_keep_newest``) truncates it in place, so the descriptor stays
        right; only ``remove`` unlinks, and it closes the descriptor first."""
        held = self._open.get(path)
        if held is not None:
            self._open.move_to_end(path)
            return held
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o640)
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o640)
        held = self._open[path] = _Held(fd, None)
        while len(self._open) > MAX_OPEN:
            os.close(self._open.popitem(last=False)[1].fd)
        return held

    def enforce(self, limits: Mapping[str, int] | None = None) -> None:
        """Trim every tenant's logs to their bounds (``limits``: a namespace's own
        per-tenant limit, else ``tenant_max_bytes``)."""
        if not self.root.exists():
            return
        for directory in self.root.iterdir():
            if directory.is_dir():
                limit = (limits or {}).get(directory.name, self.tenant_max_bytes)
                with self._lock:
                    self._make_room(directory.name, limit, 0)

    def _make_room(self, namespace: str, limit: int, incoming: int) -> int:
        """Trim the tenant's files so that ``incoming`` more bytes fit in ``limit``;
        returns the bytes left on disk. Called with ``_lock`` held."""
        files = _sizes(self.root / namespace)
        total = sum(size for _, size in files)
        if files and total + incoming > limit:
            # each file's share of the room left; a file never keeps more than max_bytes
            share = min(self.max_bytes, max(0, limit - incoming) // len(files))
            for path, size in files:
                if size > share:
                    _keep_newest(path, share)
                    held = self._open.get(path)
                    if held is not None:
                        held.size = None
                    self._marks.pop(path, None)
                    self._marked_from.pop(path, None)
            total = self._on_disk(namespace)
        self._usage[namespace] = total
        return total

    def close(self) -> None:
        self.pump.close()
        with self._lock:
            for held in self._open.values():
                os.close(held.fd)
            self._open.clear()

    async def keep_bounded(self, read_limits: Callable[[], Awaitable[dict[str, int]]]) -> None:
        """Run ``enforce`` for ever (a task of the backend); ``read_limits`` gives the
        namespaces that have a limit of their own (read every few seconds)."""
        read_at = 0.0
        while True:
            if time.monotonic() - read_at >= _LIMITS_INTERVAL_S:
                try:
                    self.limits = await read_limits()
                except Exception:  # the database away: keep the limits read before
                    log.warning("could not read the tenants' log limits", exc_info=True)
                read_at = time.monotonic()
            await asyncio.to_thread(self.enforce, self.limits)
            await asyncio.sleep(ENFORCE_INTERVAL_S)

    async def tail(
        self, namespace: str, name: str, tail_bytes: int, since: float | None = None
    ) -> str:
        """The newest ``tail_bytes`` of the log, with what the workers wrote until now;
        with ``since`` (epoch seconds), only what was written at or after it, as far as
        the marks tell (see the module docstring)."""

        def read() -> str:
            self.pump.flush(namespace, name)
            path = self.path(namespace, name)
            start = 0 if since is None else self._offset_since(path, since)
            return _read_tail(path, tail_bytes, start)

        return await asyncio.to_thread(read)

    async def lines(
        self, namespace: str, name: str, tail_bytes: int, since: float | None = None
    ) -> list[tuple[str, float | None]]:
        """The whole lines of ``tail``, each with the time of the write that ended it
        (None where the marks do not reach back to that write)."""

        def read() -> list[tuple[str, float | None]]:
            self.pump.flush(namespace, name)
            path = self.path(namespace, name)
            start = 0 if since is None else self._offset_since(path, since)
            with self._lock:
                marks = list(self._marks.get(path, ()))
                covered = self._marked_from.get(path)
                at, data = _read_tail_bytes(path, tail_bytes, start)
            if marks and len(marks) == MAX_MARKS:
                covered = marks[0][0]  # the oldest marks were forgotten
            found: list[tuple[str, float | None]] = []
            mark = 0
            for raw in data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]:
                at += len(raw) + 1
                while mark < len(marks) and marks[mark][0] < at:
                    mark += 1
                known = covered is not None and at > covered and mark < len(marks)
                found.append((raw.decode("utf-8", "replace"), marks[mark][1] if known else None))
            return found

        return await asyncio.to_thread(read)

    def _offset_since(self, path: Path, since: float) -> int:
        """Where the first write at or after ``since`` starts: the end of the last write
        before it (0 when the marks do not reach back that far)."""
        with self._lock:
            marks = list(self._marks.get(path, ()))
        start = 0
        for end, at in marks:
            if at >= since:
                return start
            start = end
        return start


def _sizes(directory: Path) -> list[tuple[Path, int]]:
    found = []
    with contextlib.suppress(OSError):
        for path in directory.glob("*.log"):
            with contextlib.suppress(OSError):
                found.append((path, path.stat().st_size))
    return found


def _keep_newest(path: Path, share: int) -> None:
    """Keep about half of ``share`` (the newest whole lines), so the file does not come back
    to this at the next write; the marker says lines were dropped."""
    keep = max(0, share // 2 - len(MARKER))
    with contextlib.suppress(OSError), open(path, "r+b") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - keep))
        tail = f.read(keep)
        newline = tail.find(b"\n")
        if 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1 :]  # from the first whole line on
        f.seek(0)
        f.truncate()
        f.write(MARKER + tail)


def _read_tail_bytes(path: Path, tail_bytes: int, start: int = 0) -> tuple[int, bytes]:
    """The file from ``start`` or its last ``tail_bytes`` (the later), and where that is."""
    if not path.exists():
        return 0, b""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        at = f.seek(max(0, start, size - tail_bytes))
        return at, f.read()


def _read_tail(path: Path, tail_bytes: int, start: int = 0) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, start, size - tail_bytes))
        return f.read().decode("utf-8", "replace")

"""Functions' stdout/stderr in embedded mode: one append-only file per function, and the
tenant's bound on all of them.

Workers write their log with ``O_APPEND`` (``SandboxSpec.log_file``), so trimming a file
in place is safe: their next write lands at the new end.

Two bounds, both enforced by ``enforce`` (run by the backend every ``ENFORCE_INTERVAL_S``)
and by ``append`` (the platform's own lines, e.g. why a call died):

- per function: ``log_max_bytes`` (``SLESS_SANDBOX_LOG_MAX_BYTES``);
- per tenant: ``max_log_bytes`` (``SLESS_LIMITS_MAX_LOG_BYTES``, or the tenant's own
  limit): when the tenant's files add up to more, each file over its share (the limit
  divided among the tenant's files) keeps only its newest share.

Trimming keeps the newest lines and drops the oldest, starting with the line after the
cut, and writes a marker line in their place: a tenant that logs without end loses its
own oldest output, never the platform's disk. Between two passes a file can grow by what
its workers write meanwhile, and never past the sandbox's per-file bound (RLIMIT_FSIZE,
``tmp_size_mb``); docs/SECURITY.md says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

log = logging.getLogger(__name__)

#: how often the backend trims the logs to their bounds, and re-reads the tenants' limits
ENFORCE_INTERVAL_S = 0.5
_LIMITS_INTERVAL_S = 5.0
MARKER = b"[earlier output dropped: log limit reached]\n"


class LogFiles:
    def __init__(self, root: Path, *, max_bytes: int, tenant_max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        #: the platform's per-tenant bound; ``enforce`` takes each tenant's own
        self.tenant_max_bytes = tenant_max_bytes

    def path(self, namespace: str, name: str) -> Path:
        return self.root / namespace / f"{name}.log"

    def remove(self, namespace: str, name: str) -> None:
        self.path(namespace, name).unlink(missing_ok=True)

    def usage(self, namespace: str) -> int:
        """Bytes of the namespace's logs on disk now."""
        return sum(size for _, size in _sizes(self.root / namespace))

    def append(self, namespace: str, name: str, text: str, *, limit: int | None = None) -> None:
        """Add a line of the platform's own (why a call died...) to a function's log,
        within the same bounds as the workers' output."""
        path = self.path(namespace, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = text.rstrip("\n").encode("utf-8", "replace")[: self.max_bytes // 4] + b"\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        self.enforce_tenant(namespace, self.tenant_max_bytes if limit is None else limit)

    def enforce(self, limits: Mapping[str, int] | None = None) -> None:
        """Trim every tenant's logs to their bounds (``limits``: a namespace's own
        per-tenant limit, else ``tenant_max_bytes``)."""
        if not self.root.exists():
            return
        for directory in self.root.iterdir():
            if directory.is_dir():
                limit = (limits or {}).get(directory.name, self.tenant_max_bytes)
                self.enforce_tenant(directory.name, limit)

    def enforce_tenant(self, namespace: str, limit: int) -> None:
        files = _sizes(self.root / namespace)
        if not files:
            return
        total = sum(size for _, size in files)
        # each file's share of the tenant's limit; a file never keeps more than max_bytes
        share = min(self.max_bytes, limit // len(files)) if total > limit else self.max_bytes
        for path, size in files:
            if size > share:
                _keep_newest(path, share)

    async def keep_bounded(self, read_limits: Callable[[], Awaitable[dict[str, int]]]) -> None:
        """Run ``enforce`` for ever (a task of the backend); ``read_limits`` gives the
        namespaces that have a limit of their own (read every few seconds)."""
        limits: dict[str, int] = {}
        read_at = 0.0
        while True:
            if time.monotonic() - read_at >= _LIMITS_INTERVAL_S:
                try:
                    limits = await read_limits()
                except Exception:  # the database away: keep the limits read before
                    log.warning("could not read the tenants' log limits", exc_info=True)
                read_at = time.monotonic()
            await asyncio.to_thread(self.enforce, limits)
            await asyncio.sleep(ENFORCE_INTERVAL_S)

    async def tail(self, namespace: str, name: str, tail_bytes: int) -> str:
        return await asyncio.to_thread(_read_tail, self.path(namespace, name), tail_bytes)


def _sizes(directory: Path) -> list[tuple[Path, int]]:
    found = []
    with contextlib.suppress(OSError):
        for path in directory.glob("*.log"):
            with contextlib.suppress(OSError):
                found.append((path, path.stat().st_size))
    return found


def _keep_newest(path: Path, share: int) -> None:
    """Keep about half of ``share`` (the newest whole lines), so the file does not come back
    to this pass at once; the marker says lines were dropped."""
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


def _read_tail(path: Path, tail_bytes: int) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - tail_bytes))
        return f.read().decode("utf-8", "replace")

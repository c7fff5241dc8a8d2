"""Functions' stdout/stderr in embedded mode: one append-only file per function.

Workers write their log with ``O_APPEND`` (``SandboxSpec.log_file``), so capping a file by
truncating it in place is safe: their next write lands at the new end. The platform
appends its own lines the same way (``append``: why a call died, marked ``[sless]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path


class LogFiles:
    def __init__(self, root: Path, *, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes

    def path(self, namespace: str, name: str) -> Path:
        return self.root / namespace / f"{name}.log"

    def append(self, namespace: str, name: str, text: str) -> None:
        """Append the platform's ``text`` (whole lines) to the function's log, in one
        ``O_APPEND`` write: it never splits a line a worker is writing at the same time."""
        path = self.path(namespace, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)

    def remove(self, namespace: str, name: str) -> None:
        self.path(namespace, name).unlink(missing_ok=True)

    def cap(self) -> None:
        """Keep each log under its cap: keep the newest half, drop the rest."""
        if not self.root.exists():
            return
        for path in self.root.glob("*/*.log"):
            with contextlib.suppress(OSError):
                if path.stat().st_size <= self.max_bytes:
                    continue
                with open(path, "r+b") as f:
                    f.seek(-self.max_bytes // 2, os.SEEK_END)
                    tail = f.read()
                    f.seek(0)
                    f.truncate()
                    f.write(b"[earlier output dropped]\n" + tail)

    async def tail(self, namespace: str, name: str, tail_bytes: int) -> str:
        return await asyncio.to_thread(_read_tail, self.path(namespace, name), tail_bytes)


def _read_tail(path: Path, tail_bytes: int) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - tail_bytes))
        return f.read().decode("utf-8", "replace")

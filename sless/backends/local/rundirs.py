"""The gateway's run directory, and those that gateways killed before they could stop left.

The run directory (``$TMPDIR/sless-run-*``) holds the workers' socket directories, the
tenants' views of the builds and the pre-started workers' slots. A gateway removes its own
when it stops; one killed with SIGKILL (or by the OOM killer, or a power cut of the
container) cannot, and its directory stayed for good, with whatever the tenants' handlers
wrote into their socket directories (docs/SECURITY.md, "the socket directory has no size
bound"). Several gateways may share one ``$TMPDIR`` (two platforms on one machine, the
test suite), so "left behind" cannot be guessed from a name, an age or a process id.

So each gateway holds an exclusive ``flock`` on its run directory for as long as it lives
(the kernel drops it when the process ends, however it ends), and marks the directory
once it holds the lock. At start, ``remove_abandoned`` removes every marked directory whose
lock it can take: nobody holds it, its gateway is gone. A directory without the mark is
never removed: it is being made right now (the mark is written after the lock is taken),
or it was made by a version of sless without this, whose gateway may still run.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "sless-run-"
#: written into a run directory once its gateway holds the lock
MARK = ".held-by-its-gateway"


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


class RunDir:
    """A run directory this process made and holds (``make``) until ``remove``."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def make(cls, base: Path) -> RunDir:
        """A new run directory in ``base`` (mode 0711: the workers' uids reach their own
        directories in it and list none), locked and marked."""
        path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
        fd = _open_dir(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            (path / MARK).touch(mode=0o600)
            path.chmod(0o711)
        except BaseException:
            os.close(fd)
            shutil.rmtree(path, ignore_errors=True)
            raise
        return cls(path, fd)

    def remove(self) -> None:
        """Remove the directory and everything in it, then let go of the lock."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def remove_abandoned(base: Path) -> list[Path]:
    """Remove the run directories in ``base`` whose gateway is gone (see the module's
    docstring); returns them. Never raises for one directory it cannot read."""
    removed: list[Path] = []
    for path in sorted(base.glob(f"{PREFIX}*")):
        try:
            fd = _open_dir(path)
        except OSError:
            continue  # gone meanwhile, or not a directory of ours
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                continue  # another user's: never ours to remove
            if not os.path.exists(os.path.join(f"/proc/self/fd/{fd}", MARK)):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its gateway runs
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
    if removed:
        log.warning(
            "removed %d run directories of gateways that ended without stopping: %s",
            len(removed),
            ", ".join(str(p) for p in removed),
        )
    return removed

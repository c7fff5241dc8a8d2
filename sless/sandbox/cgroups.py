"""cgroup v1 memory and pids limits for one worker, where the host lets us write them.

Each worker gets ``<root>/{memory,pids}/sless/<name>``: ``memory.limit_in_bytes`` (and
``memory.memsw.limit_in_bytes`` when swap accounting exists, so swap cannot extend it) is
the function's memory, ``pids.max`` its process limit. The worker's processes are moved in
before any of its code runs (see ``workers``), so all their children are counted. On stop,
whatever is left in the group is killed and the directories are removed.

When the hierarchy is missing or not writable (not root, cgroup v2 only, a container), the
worker runs with rlimits only and ``Worker.cgroup_reason`` says why.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from .specs import Limits

DEFAULT_ROOT = Path("/sys/fs/cgroup")
_PARENT = "sless"


class Cgroup:
    """The per-worker directories in the memory and pids hierarchies."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    @classmethod
    def create(
        cls, name: str, limits: Limits, root: Path = DEFAULT_ROOT
    ) -> tuple[Cgroup | None, str]:
        """Create and configure the group; ``(None, reason)`` when the host does not allow it."""
        dirs: dict[str, Path] = {}
        try:
            for controller in ("memory", "pids"):
                base = root / controller
                if not (base / "cgroup.procs").exists():
                    raise OSError(f"cgroup v1 {controller} controller not mounted at {base}")
                parent = base / _PARENT
                parent.mkdir(exist_ok=True)
                path = parent / name
                path.mkdir(exist_ok=True)
                dirs[controller] = path
            memory = limits.memory_mb * 1024 * 1024
            (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory))
            memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(str(memory))
            (dirs["pids"] / "pids.max").write_text(str(limits.max_processes))
        except OSError as e:
            Cgroup(dirs).remove()
            return None, f"cgroup limits unavailable ({e.strerror or e}); using rlimits only"
        return cls(dirs), "cgroup v1 memory and pids limits applied"

    def add(self, pid: int) -> None:
        for path in self.dirs.values():
            (path / "cgroup.procs").write_text(str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.dirs.values():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (path / "cgroup.procs").read_text().split())
        return found

    def oom_killed(self) -> bool:
        """Whether the kernel OOM-killed something in the group."""
        memory = self.dirs.get("memory")
        if memory is None:
            return False
        with contextlib.suppress(OSError):
            for line in (memory / "memory.oom_control").read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1]) > 0
            return int((memory / "memory.failcnt").read_text()) > 0
        return False

    def kill_all(self) -> None:
        # a fork bomb keeps forking while we kill: repeat until the group is empty
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        for path in self.dirs.values():
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    # busy until the last killed process is reaped
                    time.sleep(0.01)

"""cgroup v1 limits for one worker, where the host lets us write them.

Each worker gets ``<root>/{memory,pids}/sless/<name>``: ``memory.limit_in_bytes`` (and
``memory.memsw.limit_in_bytes`` when swap accounting exists, so swap cannot extend it) is
the function's memory, ``pids.max`` its process limit. The worker's processes are moved in
before any of its code runs (see ``workers``), so all their children are counted. On stop,
whatever is left in the group is killed and the directories are removed.

CPU is shared between tenants, not between workers: each worker also gets
``<root>/cpu/sless/<tenant>/<name>``, and every tenant group has the same ``cpu.shares``.
The kernel's fair scheduler divides contended CPU between sibling groups by their
shares, so a tenant with forty busy workers gets no more CPU than a tenant with one; idle
tenants leave their share to the others (shares are weights, not caps). Tenant groups
are left in place when their last worker stops: empty, they cost nothing, and removing
them would race with a worker of the same tenant starting.

When the memory or pids hierarchy is missing or not writable (not root, cgroup v2 only, a
container), the worker runs with rlimits only and ``Worker.cgroup_reason`` says why.
Without the cpu controller the worker still gets its memory and pids limits, and a
warning is logged (once per process) that tenants then compete per process for CPU.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import time
from pathlib import Path

from .specs import Limits

log = logging.getLogger(__name__)

DEFAULT_ROOT = Path("/sys/fs/cgroup")
_PARENT = "sless"
#: the same weight for every tenant group (1024 is the kernel's default for a group)
TENANT_CPU_SHARES = 1024
#: workers launched without a namespace share one group
UNTENANTED = "_untenanted"
_TENANT_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_warned: set[str] = set()


def tenant_group(namespace: str) -> str:
    """The cpu group name of a namespace: the namespace itself when it is a DNS label
    (it becomes a directory name), else the shared ``UNTENANTED`` group."""
    return namespace if _TENANT_RE.match(namespace) else UNTENANTED


def _cpu_dir(root: Path, tenant: str, name: str) -> Path:
    """Create ``cpu/sless/<tenant>/<name>`` with the tenant's equal share; OSError if the
    controller is absent or not writable."""
    base = root / "cpu"
    if not (base / "cgroup.procs").exists():
        raise OSError(f"cgroup v1 cpu controller not mounted at {base}")
    group = base / _PARENT / tenant_group(tenant)
    group.mkdir(parents=True, exist_ok=True)
    (group / "cpu.shares").write_text(str(TENANT_CPU_SHARES))
    path = group / name
    path.mkdir(exist_ok=True)
    return path


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


class Cgroup:
    """The per-worker directories in the memory and pids hierarchies."""

    def __init__(self, dirs: dict[str, Path], root: Path = DEFAULT_ROOT) -> None:
        self.dirs = dirs
        self.root = root

    @classmethod
    def create(
        cls, name: str, limits: Limits, root: Path = DEFAULT_ROOT, *, tenant: str = ""
    ) -> tuple[Cgroup | None, str]:
        """Create and configure the group; ``(None, reason)`` when the host does not allow it.

        ``tenant`` (the function's namespace) picks the cpu group the worker shares with
        the tenant's other workers."""
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
        try:
            dirs["cpu"] = _cpu_dir(root, tenant, name)
        except OSError as e:
            _warn_once(
                f"no per-tenant CPU shares ({e.strerror or e}): a tenant's busy functions "
                "compete for CPU with every other tenant's, process by process"
            )
            return cls(dirs, root), "cgroup v1 memory and pids limits applied; no cpu shares"
        return cls(dirs, root), "cgroup v1 memory, pids and per-tenant cpu shares applied"

    def assign(self, name: str, tenant: str, limits: Limits) -> None:
        """Make a running group the one a worker ``name`` of ``tenant`` would have had.

        For a pre-started worker being specialized, before any of the function's code
        runs: its memory and pids groups are renamed ``name`` (cgroup v1 renames within
        one parent; a clash keeps the old name), their limits become the function's, and
        its processes move to ``<tenant>/<name>`` in the cpu hierarchy (its group there is
        renamed when it already sits in the tenant's). OSError (e.g.
        EBUSY: the worker already uses more memory than the new limit) leaves the worker
        unfit to serve; the caller stops it."""
        for controller in ("memory", "pids"):
            path = self.dirs.get(controller)
            if path is not None and path.name != name:
                with contextlib.suppress(OSError):
                    path.rename(path.with_name(name))
                    self.dirs[controller] = path.with_name(name)
        memory = self.dirs.get("memory")
        if memory is not None:
            value = str(limits.memory_mb * 1024 * 1024)
            memsw = memory / "memory.memsw.limit_in_bytes"
            # memory.limit_in_bytes may never exceed memsw: raise memsw first, lower it last
            current = int((memory / "memory.limit_in_bytes").read_text())
            order = ["memory.limit_in_bytes"]
            if memsw.exists():
                if int(value) > current:
                    order.insert(0, "memory.memsw.limit_in_bytes")
                else:
                    order.append("memory.memsw.limit_in_bytes")
            for limit_file in order:
                (memory / limit_file).write_text(value)
        pids = self.dirs.get("pids")
        if pids is not None:
            (pids / "pids.max").write_text(str(limits.max_processes))
        old = self.dirs.get("cpu")
        if old is None:
            return
        if old.parent == self.root / "cpu" / _PARENT / tenant_group(tenant):
            # started in the tenant's group (the pool knew whose it was): a rename, where
            # moving each process would wait for an RCU grace period (~13 ms each here)
            with contextlib.suppress(OSError):
                old.rename(old.with_name(name))
                self.dirs["cpu"] = old.with_name(name)
            return
        new = _cpu_dir(self.root, tenant, name)
        if new == old:
            return
        for pid in sorted(self.pids()):
            with contextlib.suppress(ProcessLookupError):
                (new / "cgroup.procs").write_text(str(pid))
        self.dirs["cpu"] = new
        with contextlib.suppress(OSError):
            old.rmdir()

    def add(self, pid: int) -> None:
        for controller, path in self.dirs.items():
            try:
                (path / "cgroup.procs").write_text(str(pid))
            except OSError as e:
                if controller != "cpu":
                    raise
                # CPU fairness is best effort; the memory and pids limits are not
                _warn_once(f"could not move a worker into its tenant's cpu group: {e}")

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

    def fork_refusals(self) -> int:
        """How many forks the pids limit refused in the group (``pids.events``: ``max``)."""
        pids = self.dirs.get("pids")
        if pids is None:
            return 0
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in (pids / "pids.events").read_text().splitlines():
                if line.startswith("max "):
                    return int(line.split()[1])
        return 0

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

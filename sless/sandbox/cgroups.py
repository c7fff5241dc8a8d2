"""cgroup v1 limits for one worker, where the host lets us write them.

Each worker gets ``<root>/{memory,pids}/sless/<group>``: ``memory.limit_in_bytes`` (and
``memory.memsw.limit_in_bytes`` when swap accounting exists, so swap cannot extend it) is
the function's memory, ``pids.max`` its process limit. The worker's processes are moved in
before any of its code runs (see ``workers``), so all their children are counted. On stop,
whatever is left in the group is killed and the directories are removed.

A group is a directory its creator alone made. cgroup directories are host-wide: two
gateways on one machine (two data directories, two test runs) or two handler checks of
one function ask for the same worker name, and a group they shared would share one
memory and pids limit, and stopping either worker would SIGKILL the other's processes.
So ``<group>`` is the worker's name when that is free in every hierarchy, else the name
with a suffix unique to this process and this group (``<name>.<pid>-<serial>``, then a
random one after that for a dead process's leftovers): the test is ``mkdir`` without
``exist_ok`` (and, for a pre-started worker's group, a rename that the kernel refuses
onto an existing group), never a name looked up first. ``Cgroup.dirs`` and
``Worker.cgroup_dirs`` are the groups themselves; nothing rebuilds a path from a worker's
name. ``kill_all`` and ``remove`` touch only those, and nothing after ``remove``.

CPU is shared between tenants, not between workers: each worker also gets
``<root>/cpu/sless/<tenant>/<group>``, and every tenant group has the same
``cpu.shares``. The kernel's fair scheduler divides contended CPU between sibling groups
by their shares, so a tenant with forty busy workers gets no more CPU than a tenant with
one; idle tenants leave their share to the others (shares are weights, not caps). Tenant
groups are shared on purpose (by every gateway on the host) and left in place when their
last worker stops: empty, they cost nothing, and removing them would race with a worker
of the same tenant starting.

When the memory or pids hierarchy is missing or not writable (not root, cgroup v2 only, a
container), the worker runs with rlimits only and ``Worker.cgroup_reason`` says why.
Without the cpu controller the worker still gets its memory and pids limits, and a
warning is logged (once per process) that tenants then compete per process for CPU.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import re
import secrets
import signal
import time
from collections.abc import Iterable, Iterator, Sequence
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
#: random names tried after the process-unique one (a dead process's leftover may hold it)
_RANDOM_TRIES = 8
_serials = itertools.count(1)
_warned: set[str] = set()


def tenant_group(namespace: str) -> str:
    """The cpu group name of a namespace: the namespace itself when it is a DNS label
    (it becomes a directory name), else the shared ``UNTENANTED`` group."""
    return namespace if _TENANT_RE.match(namespace) else UNTENANTED


def _new_token() -> str:
    """What makes one group's names unique: this process and a serial within it."""
    return f"{os.getpid()}-{next(_serials)}"


def _candidates(name: str, token: str) -> Iterator[str]:
    """The names a group of worker ``name`` may take, in order: ``name`` itself, then one
    unique to this process and this group (``token``), then random ones."""
    yield name
    yield f"{name}.{token}"
    for _ in range(_RANDOM_TRIES):
        yield f"{name}.{token}.{secrets.token_hex(4)}"


def _claim(parents: list[Path], names: Iterable[str]) -> str:
    """Make ``<parent>/<n>`` in every parent for the first ``n`` free in all of them and
    return it. ``mkdir`` without ``exist_ok`` is the test: a directory that exists is
    another group's (another gateway's, another check's, a leftover), never ours."""
    for name in names:
        made: list[Path] = []
        try:
            for parent in parents:
                (parent / name).mkdir()
                made.append(parent / name)
        except BaseException as e:
            for path in made:  # ours, just made, no process in it yet
                with contextlib.suppress(OSError):
                    path.rmdir()
            if isinstance(e, FileExistsError):
                continue
            raise
        return name
    raise FileExistsError(errno.EEXIST, "no free cgroup name", str(parents[0]))


def _renamed(path: Path, name: str) -> Path | None:
    """``path`` renamed ``name`` in its parent, or None when that name is taken. The
    kernel refuses (EEXIST) to rename a cgroup onto an existing one; the look first only
    matters in a plain directory tree (tests), where rename(2) replaces an empty one."""
    target = path.with_name(name)
    if target.exists():
        return None
    try:
        path.rename(target)
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return None
        raise
    return target


def _tenant_dir(root: Path, tenant: str) -> Path:
    """``cpu/sless/<tenant>`` with the tenant's equal share (shared by every worker of the
    tenant, on purpose); OSError if the controller is absent or not writable."""
    base = root / "cpu"
    if not (base / "cgroup.procs").exists():
        raise OSError(f"cgroup v1 cpu controller not mounted at {base}")
    group = base / _PARENT / tenant_group(tenant)
    group.mkdir(parents=True, exist_ok=True)
    (group / "cpu.shares").write_text(str(TENANT_CPU_SHARES))
    return group


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


class Cgroup:
    """The per-worker directories in the memory, pids (and cpu) hierarchies: each one
    made by this object alone (see the module docstring)."""

    def __init__(self, dirs: dict[str, Path], root: Path = DEFAULT_ROOT, token: str = "") -> None:
        self.dirs = dirs
        self.root = root
        #: what makes this group's names unique when the worker's is taken
        self.token = token or _new_token()
        #: groups made for a move that failed half-way (``assign``), removed with the rest
        self._spares: list[Path] = []

    @property
    def name(self) -> str:
        """The group's directory name (in the memory hierarchy; the same in the others
        unless a name was free in one and not in another)."""
        path = self.dirs.get("memory") or next(iter(self.dirs.values()), None)
        return "" if path is None else path.name

    @classmethod
    def create(
        cls, name: str, limits: Limits, root: Path | None = None, *, tenant: str = ""
    ) -> tuple[Cgroup | None, str]:
        """Create and configure a group for worker ``name``; ``(None, reason)`` when the
        host does not allow it. The group is named ``name`` when that is free, else
        ``name`` with a unique suffix (``Cgroup.name``).

        ``tenant`` (the function's namespace) picks the cpu group the worker shares with
        the tenant's other workers. ``root``: where the hierarchies are (``DEFAULT_ROOT``)."""
        root = root or DEFAULT_ROOT
        token = _new_token()
        dirs: dict[str, Path] = {}
        try:
            parents = []
            for controller in ("memory", "pids"):
                base = root / controller
                if not (base / "cgroup.procs").exists():
                    raise OSError(f"cgroup v1 {controller} controller not mounted at {base}")
                (base / _PARENT).mkdir(exist_ok=True)
                parents.append(base / _PARENT)
            leaf = _claim(parents, _candidates(name, token))
            dirs = {"memory": parents[0] / leaf, "pids": parents[1] / leaf}
            memory = limits.memory_mb * 1024 * 1024
            (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory))
            memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(str(memory))
            (dirs["pids"] / "pids.max").write_text(str(limits.max_processes))
        except OSError as e:
            Cgroup(dirs, root, token).remove()
            return None, f"cgroup limits unavailable ({e.strerror or e}); using rlimits only"
        try:
            group = _tenant_dir(root, tenant)
            dirs["cpu"] = group / _claim([group], itertools.chain([leaf], _candidates(name, token)))
        except OSError as e:
            _warn_once(
                f"no per-tenant CPU shares ({e.strerror or e}): a tenant's busy functions "
                "compete for CPU with every other tenant's, process by process"
            )
            return cls(dirs, root, token), "cgroup v1 memory and pids limits applied; no cpu shares"
        return cls(dirs, root, token), "cgroup v1 memory, pids and per-tenant cpu shares applied"

    def _rename(self, controllers: Sequence[str], names: Iterable[str]) -> None:
        """Rename the groups of ``controllers`` to the first name free in all of them
        (cgroup v1 renames within one parent). Where a name is taken in one, the others
        are renamed back; when every name is taken, or a rename fails otherwise, the
        groups keep the names they have: their own, unique ones."""
        for name in names:
            done: list[tuple[str, Path]] = []
            try:
                for controller in controllers:
                    new = _renamed(self.dirs[controller], name)
                    if new is None:
                        break
                    done.append((controller, self.dirs[controller]))
                    self.dirs[controller] = new
                else:
                    return
            except OSError:
                self._undo(done)
                return
            self._undo(done)

    def _undo(self, done: list[tuple[str, Path]]) -> None:
        for controller, old in reversed(done):
            # if its old name was taken meanwhile it stays renamed: still no one else's
            with contextlib.suppress(OSError):
                self.dirs[controller].rename(old)
                self.dirs[controller] = old

    def assign(self, name: str, tenant: str, limits: Limits) -> None:
        """Make a running group the one a worker ``name`` of ``tenant`` would have had.

        For a pre-started worker being specialized, before any of the function's code
        runs: its memory and pids groups are renamed ``name`` (or, when another group has
        that name, ``name`` with this group's unique suffix; when every such name is
        taken they keep their own), their limits become the function's, and its
        processes move to a new group of its own in ``<tenant>`` in the cpu hierarchy
        (its group there is renamed instead when it already sits in the tenant's).
        OSError (e.g. EBUSY: the worker already uses more memory than the new limit)
        leaves the worker unfit to serve; the caller stops it."""
        controllers = [c for c in ("memory", "pids") if c in self.dirs]
        if controllers and self.name != name:
            self._rename(controllers, _candidates(name, self.token))
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
        names = itertools.chain([self.name], _candidates(name, self.token))
        if old.parent == self.root / "cpu" / _PARENT / tenant_group(tenant):
            # started in the tenant's group (the pool knew whose it was): a rename, where
            # moving each process would wait for an RCU grace period (~13 ms each here)
            if old.name != self.name:
                self._rename(["cpu"], names)
            return
        group = _tenant_dir(self.root, tenant)
        new = group / _claim([group], names)
        try:
            for pid in sorted(self.pids()):
                with contextlib.suppress(ProcessLookupError):
                    (new / "cgroup.procs").write_text(str(pid))
        except OSError:
            self._spares.append(new)  # the caller stops the worker: ``remove`` takes it
            raise
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
        """Remove the group's directories and forget them: a later ``kill_all`` or
        ``remove`` (``Worker.stop`` is idempotent) must not reach a group that another
        worker has since made under the same name."""
        for controller, path in list(self.dirs.items()):
            if _rmdir(path):
                del self.dirs[controller]
        self._spares = [path for path in self._spares if not _rmdir(path)]


def _rmdir(path: Path) -> bool:
    """Remove a group's directory (gone already counts); False if it stayed busy."""
    for _ in range(100):
        try:
            path.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            # busy until the last killed process is reaped
            time.sleep(0.01)
            continue
        return True
    return False

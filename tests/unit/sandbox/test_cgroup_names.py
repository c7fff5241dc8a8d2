"""Each ``Cgroup`` is a directory its creator alone made (``sless.sandbox.cgroups``).

Cgroup directories are host-wide: two gateways on one machine (two data directories, two
test runs), or two handler checks of one function, ask for groups of the same name. Each
must get its own, or they share one memory and pids limit and stopping one SIGKILLs the
other's processes. These tests use a directory tree laid out like the cgroup v1 mounts
(the kernel's semantics for the real mounts: tests/integration/sandbox/
test_sandbox_cgroup_names.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.sandbox import Limits
from sless.sandbox.cgroups import Cgroup

SMALL = Limits(memory_mb=64, max_processes=8)
LARGE = Limits(memory_mb=96, max_processes=16)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for controller in ("memory", "pids", "cpu"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "cgroup.procs").write_text("")
    return tmp_path


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def create(name: str, root: Path, limits: Limits = SMALL, tenant: str = "t1") -> Cgroup:
    cgroup, reason = Cgroup.create(name, limits, root, tenant=tenant)
    assert cgroup is not None, reason
    return cgroup


def memory_limit(cgroup: Cgroup) -> int:
    return int((cgroup.dirs["memory"] / "memory.limit_in_bytes").read_text())


def test_two_groups_asked_for_by_one_name_get_their_own_directories(root: Path) -> None:
    first = create("ns.fn.v1.1", root, SMALL)
    second = create("ns.fn.v1.1", root, LARGE)
    assert set(first.dirs) == set(second.dirs) == {"memory", "pids", "cpu"}
    for controller in first.dirs:
        assert first.dirs[controller] != second.dirs[controller]
        assert first.dirs[controller].is_dir()
        assert second.dirs[controller].is_dir()
    # each keeps its own limits
    assert memory_limit(first) == 64 << 20
    assert memory_limit(second) == 96 << 20
    assert (first.dirs["pids"] / "pids.max").read_text() == "8"
    assert (second.dirs["pids"] / "pids.max").read_text() == "16"
    # one name in every controller, the asked-for one first, then one made unique
    assert first.name == "ns.fn.v1.1"
    assert second.name.startswith("ns.fn.v1.1.")
    assert {p.name for p in second.dirs.values()} == {second.name}
    # the tenant's cpu group is still the one both share
    assert first.dirs["cpu"].parent == second.dirs["cpu"].parent == root / "cpu/sless/t1"


def test_a_directory_left_by_someone_else_is_never_taken_over(root: Path) -> None:
    # another process's group of that name (in one controller only, even)
    theirs = root / "pids/sless/ns.fn.v1.1"
    theirs.mkdir(parents=True)
    (theirs / "pids.max").write_text("999")
    mine = create("ns.fn.v1.1", root)
    assert mine.dirs["pids"] != theirs
    assert (theirs / "pids.max").read_text() == "999"
    assert {p.name for p in mine.dirs.values()} == {mine.name}


def test_stopping_one_group_leaves_the_others_processes_and_directories(
    root: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    other = create("ns.fn.v1.1.check", root)
    other.add(sleeper.pid)
    mine = create("ns.fn.v1.1.check", root)
    mine.kill_all()
    mine.remove()
    assert sleeper.poll() is None, "the other group's process was killed"
    assert other.pids() == {sleeper.pid}
    assert all(path.is_dir() for path in other.dirs.values())


def test_assign_never_renames_onto_another_groups_name(root: Path) -> None:
    direct = create("ns.fn.v1.1", root, SMALL, tenant="t1")
    prestarted = create("prestart.python.1", root, SMALL, tenant="t1")
    prestarted.assign("ns.fn.v1.1", "t1", LARGE)
    for controller in direct.dirs:
        assert prestarted.dirs[controller] != direct.dirs[controller]
        assert prestarted.dirs[controller].is_dir()
    # named after the function all the same, one name in every controller
    assert prestarted.name.startswith("ns.fn.v1.1.")
    assert {p.name for p in prestarted.dirs.values()} == {prestarted.name}
    assert memory_limit(prestarted) == 96 << 20
    assert memory_limit(direct) == 64 << 20
    assert not (root / "memory/sless/prestart.python.1").exists()


def test_assign_to_another_tenant_makes_a_cpu_group_of_its_own(root: Path) -> None:
    direct = create("ns.fn.v1.1", root, tenant="t2")
    prestarted = create("prestart.python.2", root, tenant="")
    prestarted.assign("ns.fn.v1.1", "t2", SMALL)
    assert prestarted.dirs["cpu"].parent == root / "cpu/sless/t2"
    assert prestarted.dirs["cpu"] != direct.dirs["cpu"]
    assert not (root / "cpu/sless/_untenanted/prestart.python.2").exists()


def test_assign_to_a_free_name_takes_it(root: Path) -> None:
    prestarted = create("prestart.python.3", root)
    prestarted.assign("ns.fn.v1.7", "t1", SMALL)
    assert prestarted.name == "ns.fn.v1.7"
    assert {p.name for p in prestarted.dirs.values()} == {"ns.fn.v1.7"}

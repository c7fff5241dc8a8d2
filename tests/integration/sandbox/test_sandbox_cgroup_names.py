"""Real cgroup v1 groups of one name: each worker keeps its own.

cgroup directories are host-wide, so two gateways on one machine (two ``sless up`` data
directories, two test runs) or two handler checks of one function ask for groups of the
same name. Seen before the fix: "handler check failed: worker killed by signal SIGKILL"
while two test runs ran at once, because stopping one worker SIGKILLed every process of
the group the two shared.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.sandbox import Limits, Worker, check_handler
from sless.sandbox.cgroups import Cgroup
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    alive,
    launch,
    make_spec,
    require_sandbox,
    run_probe,
)

pytestmark = pytest.mark.integration

SMALL = Limits(memory_mb=64, max_processes=8)


@pytest.fixture
def tenant() -> Iterator[str]:
    # a cpu group of this test's own (tenant groups are shared host-wide, on purpose)
    name = f"sless-cgn{uuid.uuid4().hex[:8]}"
    yield name
    group = Path("/sys/fs/cgroup/cpu/sless") / name
    if group.exists():
        group.rmdir()  # empty once the test's groups are gone


@pytest.fixture
def sleepers() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def sleeper_in(cgroup: Cgroup, started: list[subprocess.Popen[bytes]]) -> int:
    process = subprocess.Popen(["sleep", "60"])
    started.append(process)
    cgroup.add(process.pid)
    return process.pid


def create(name: str, tenant: str, limits: Limits = SMALL) -> Cgroup:
    cgroup, reason = Cgroup.create(name, limits, tenant=tenant)
    if cgroup is None or "cpu" not in cgroup.dirs:
        pytest.fail(f"cgroup v1 memory, pids and cpu expected on this host: {reason}")
    return cgroup


def groups_of(pid: int) -> dict[str, str]:
    """The kernel's view: controller -> group path of ``pid``."""
    found = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            found[controller] = path
    return found


def in_its_groups(worker: Worker) -> None:
    dirs = worker.cgroup_dirs
    for pid in worker.pids():
        if alive(pid):
            seen = groups_of(pid)
            for controller in ("memory", "pids", "cpu"):
                expected = dirs[controller].relative_to(f"/sys/fs/cgroup/{controller}")
                assert seen[controller] == f"/{expected}", (controller, seen)


async def test_two_workers_of_one_name_keep_their_own_groups_and_limits(tmp_path: Path) -> None:
    require_sandbox()
    first_spec = make_spec(tmp_path / "a")
    second_spec = dataclasses.replace(
        make_spec(tmp_path / "b"),
        name=first_spec.name,  # as a second gateway on this host would name it
        limits=dataclasses.replace(first_spec.limits, memory_mb=96),
    )
    first = await launch(first_spec)
    try:
        second = await launch(second_spec)
        try:
            assert first.cgroup_limited, first.cgroup_reason
            assert second.cgroup_limited, second.cgroup_reason
            for controller in ("memory", "pids", "cpu"):
                assert first.cgroup_dirs[controller] != second.cgroup_dirs[controller]
            limits = {
                worker.spec.limits.memory_mb: int(
                    (worker.cgroup_dirs["memory"] / "memory.limit_in_bytes").read_text()
                )
                for worker in (first, second)
            }
            assert limits == {128: 128 << 20, 96: 96 << 20}
            in_its_groups(first)
            in_its_groups(second)
            first_pids = first.pids()
            assert first.pid in first_pids
            assert not first_pids & second.pids()
        finally:
            await second.stop()
        assert all(alive(pid) for pid in first_pids), "stopping the second killed the first"
        data = await run_probe(first, "result = 'still here'")
        assert data["result"] == "still here"
    finally:
        await first.stop()
    assert not any(path.exists() for path in first.cgroup_dirs.values())
    assert not any(path.exists() for path in second.cgroup_dirs.values())


async def test_two_checks_of_one_function_at_once_both_pass(tmp_path: Path) -> None:
    require_sandbox()
    quick = make_spec(tmp_path / "quick")
    slow = dataclasses.replace(make_spec(tmp_path / "slow"), name=quick.name)
    (slow.code_dir / "handler.py").write_text(
        "import time\ntime.sleep(3)\n\ndef handle(event, context):\n    return 1\n"
    )
    results = await asyncio.gather(
        check_handler(quick, runtimes_dir=RUNTIMES_DIR),
        check_handler(slow, runtimes_dir=RUNTIMES_DIR),
    )
    assert results == [(True, "handler.handle is callable")] * 2


OTHER_GATEWAY = """
import json, subprocess, sys
from sless.sandbox import Limits
from sless.sandbox.cgroups import Cgroup
cgroup, reason = Cgroup.create(sys.argv[1], Limits(memory_mb=96, max_processes=8),
                               tenant=sys.argv[2])
sleeper = subprocess.Popen(["sleep", "60"])
cgroup.add(sleeper.pid)
print(json.dumps({"pid": sleeper.pid, "dirs": {c: str(p) for c, p in cgroup.dirs.items()}}),
      flush=True)
sys.stdin.readline()  # until the test is done
cgroup.kill_all()
cgroup.remove()
"""


def test_a_group_of_another_gateway_process_is_left_alone(
    tenant: str, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    name = f"test.{uuid.uuid4().hex[:10]}"
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER_GATEWAY, name, tenant],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        theirs = json.loads(other.stdout.readline())
        mine = create(name, tenant)  # the same name, as a second gateway's worker
        try:
            pid = sleeper_in(mine, sleepers)
            for controller, path in mine.dirs.items():
                assert str(path) != theirs["dirs"][controller]
            assert int((mine.dirs["memory"] / "memory.limit_in_bytes").read_text()) == 64 << 20
            their_memory = Path(theirs["dirs"]["memory"], "memory.limit_in_bytes")
            assert int(their_memory.read_text()) == 96 << 20
            mine.kill_all()
            mine.remove()
            assert not alive(pid)
            assert alive(theirs["pid"]), "stopping this gateway's group killed the other's"
            assert all(Path(path).is_dir() for path in theirs["dirs"].values())
        finally:
            mine.kill_all()
            mine.remove()
    finally:
        other.communicate("done\n", timeout=30)
    assert other.returncode == 0


def test_a_removed_group_never_reaches_one_made_later_under_its_name(
    tenant: str, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    name = f"test.{uuid.uuid4().hex[:10]}"
    mine = create(name, tenant)
    mine.remove()
    assert mine.dirs == {}
    later = create(name, tenant)  # the name is free again: anyone may take it
    try:
        pid = sleeper_in(later, sleepers)
        # a second stop of the first worker (Worker.stop is idempotent)
        assert mine.pids() == set()
        mine.kill_all()
        mine.remove()
        assert alive(pid)
        assert all(path.is_dir() for path in later.dirs.values())
    finally:
        later.kill_all()
        later.remove()


def test_a_prestarted_group_is_never_renamed_onto_a_live_one(
    tenant: str, sleepers: list[subprocess.Popen[bytes]]
) -> None:
    name = f"test.{uuid.uuid4().hex[:10]}"
    direct = create(name, tenant)
    prestarted = create(f"prestart.{uuid.uuid4().hex[:10]}", tenant)
    try:
        theirs = sleeper_in(direct, sleepers)
        ours = sleeper_in(prestarted, sleepers)
        prestarted.assign(name, tenant, Limits(memory_mb=96, max_processes=8))
        for controller in ("memory", "pids", "cpu"):
            assert prestarted.dirs[controller] != direct.dirs[controller]
        assert prestarted.name.startswith(f"{name}.")
        assert {path.name for path in prestarted.dirs.values()} == {prestarted.name}
        assert prestarted.pids() == {ours}
        assert int((direct.dirs["memory"] / "memory.limit_in_bytes").read_text()) == 64 << 20
        prestarted.kill_all()
        assert alive(theirs)
        assert not alive(ours)
    finally:
        for cgroup in (prestarted, direct):
            cgroup.kill_all()
            cgroup.remove()


def test_an_assign_that_fails_moving_the_processes_leaves_no_group_behind(
    tenant: str, sleepers: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pre-started worker moves to a cpu group made for it in its tenant's; when a move
    fails (the kernel may answer EBUSY), the caller stops the worker, and that group must
    go with the others (the ``tenant`` fixture's rmdir of the tenant's group fails if
    one is left in it)."""
    prestarted = create(f"prestart.{uuid.uuid4().hex[:10]}", "")
    group = Path("/sys/fs/cgroup/cpu/sless") / tenant
    write_text = Path.write_text

    def refuse_moves(path: Path, data: str, *args: object, **kwargs: object) -> int:
        if path.name == "cgroup.procs" and path.parent.parent == group:
            raise OSError(16, "Device or resource busy")
        return write_text(path, data, *args, **kwargs)  # type: ignore[arg-type]

    try:
        sleeper_in(prestarted, sleepers)
        monkeypatch.setattr(Path, "write_text", refuse_moves)
        with pytest.raises(OSError, match="busy"):
            prestarted.assign(f"test.{uuid.uuid4().hex[:10]}", tenant, SMALL)
        monkeypatch.undo()
    finally:
        prestarted.kill_all()
        prestarted.remove()
    assert [p.name for p in group.iterdir() if p.is_dir()] == []

"""Attack: tenant code runs as host root. When the gateway is root, the sandbox's uid 65534
used to map to host uid 0, so anything that got past the namespaces (a kernel bug, a
host-wide /proc/sys file) was root on the host. Every process of a worker must run as the
tenant's own unprivileged host uid and gid, with no supplementary group, sandboxed or not,
and a worker without one is never started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sless.sandbox import WorkerStartError, start_worker
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    TENANT_A,
    launch,
    make_spec,
    require_sandbox,
    run_probe,
)

pytestmark = pytest.mark.integration

if os.geteuid() != 0:
    pytest.skip("the gateway switches uid only as root", allow_module_level=True)


def host_identity(pid: int) -> tuple[list[int], list[int], str]:
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    uids = [int(v) for v in status["Uid"].split()]
    gids = [int(v) for v in status["Gid"].split()]
    return uids, gids, status["Groups"].strip()


def process_tree(root: int) -> set[int]:
    """``root`` and its descendants, from the host's /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


async def test_every_process_of_a_worker_is_the_tenants_host_uid(
    tmp_path: Path, isolation: str
) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    try:
        inside = await run_probe(
            worker,
            """
            import os, subprocess
            child = subprocess.run(["/usr/bin/id", "-u"], capture_output=True, text=True)
            result = {"uid": os.getuid(), "gid": os.getgid(), "child": child.stdout.strip(),
                      "uid_map": open("/proc/self/uid_map").read().split()}
            """,
        )
        pids = process_tree(worker.pid)
        identities = {pid: host_identity(pid) for pid in pids if Path(f"/proc/{pid}").exists()}
        socket_owner = worker.socket_path.stat()
    finally:
        await worker.stop()
    # the sandbox's view does not change: uid 65534 (gVisor: 0 of the Sentry's kernel, see
    # sless/sandbox/gvisor.py GVISOR_UID), no host uid visible inside
    own = 0 if isolation == "gvisor" else 65534
    assert inside["result"]["uid"] == inside["result"]["gid"] == own
    assert inside["result"]["uid_map"][0] == str(own)
    assert len(identities) >= 2  # bubblewrap and the runtime server at least
    for uids, gids, groups in identities.values():
        assert uids == [TENANT_A.uid] * 4  # real, effective, saved, file system
        assert gids == [TENANT_A.gid] * 4
        assert groups == ""
    assert (socket_owner.st_uid, socket_owner.st_gid) == (TENANT_A.uid, TENANT_A.gid)


async def test_a_worker_without_a_host_uid_is_refused(tmp_path: Path) -> None:
    require_sandbox()
    for unsafe in (False, True):
        with pytest.raises(WorkerStartError, match="refusing to run tenant code as host root"):
            await start_worker(
                make_spec(tmp_path / str(unsafe), host_ids=None),
                runtimes_dir=RUNTIMES_DIR,
                unsafe_no_sandbox=unsafe,
            )


async def test_without_the_sandbox_the_interpreter_still_runs_as_the_tenants_uid(
    tmp_path: Path,
) -> None:
    """--unsafe-no-sandbox (development only) drops host root too."""
    worker = await start_worker(
        make_spec(tmp_path), runtimes_dir=RUNTIMES_DIR, unsafe_no_sandbox=True
    )
    try:
        seen = await run_probe(
            worker,
            """
            import os
            try:
                open("/proc/sys/fs/lease-break-time", "w").close()
                opened = True
            except OSError as e:
                opened = type(e).__name__
            result = {"ids": [os.getuid(), os.geteuid(), os.getgid()], "groups": os.getgroups(),
                      "opened": opened}
            """,
        )
    finally:
        await worker.stop()
    result = seen["result"]
    assert result["ids"] == [TENANT_A.uid, TENANT_A.uid, TENANT_A.gid]
    assert result["groups"] == []
    assert result["opened"] == "PermissionError"

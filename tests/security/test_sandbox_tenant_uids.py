"""Attack: one tenant's escaped code reaches another tenant's files or workers. Each
tenant's workers run as a host uid and gid of its own from the platform's range (never 0,
never shared, the same after a restart); its files on the host (its view of its builds,
its socket directories, its egress socket) are reachable by its ids only; the data dir
is the gateway's alone. A pre-started generic worker runs as one tenant's uid and is only
ever handed to that tenant."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from sless.backends.local.uids import SandboxUids, UidRange, UidRangeError
from sless.sandbox import HostIds, PrestartPool
from sless.sandbox.gvisor import GVISOR_UID
from sless.store import create_pool
from tests.conftest import RunningGateway
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    TENANT_A,
    TENANT_B,
    make_spec,
    require_sandbox,
    run_probe,
    searchable,
)
from tests.integration.sandbox.test_sandbox_prestart import LIMITS
from tests.support import deploy

pytestmark = pytest.mark.integration

if os.geteuid() != 0:
    pytest.skip("the gateway switches uid only as root", allow_module_level=True)

WHOAMI = {
    "handler.py": (
        "import os\n\n"
        "def handle(event, context):\n"
        "    return {'uid': os.getuid(), 'code': os.listdir('/code')}\n"
    )
}


def worker_of(gateway: RunningGateway, namespace: str, name: str) -> Any:
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    pool = backend.pool(namespace, name)
    return pool._slots[0].worker


def host_uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise AssertionError("no Uid line")


def as_uid(ids: HostIds, code: str) -> str:
    """Run ``code`` on the host as ``ids`` (what an escape from that tenant's sandbox is)."""
    result = subprocess.run(
        ["/usr/bin/python3", "-I", "-c", code],
        user=ids.uid,
        group=ids.gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        check=False,
        cwd="/",
    )
    return (result.stdout + result.stderr).strip()


def test_each_tenant_runs_as_its_own_host_uid_and_reaches_only_its_own_files(
    gateway: RunningGateway, isolation: str
) -> None:
    settings = gateway.settings.sandbox
    alpha = gateway.tenant("alpha")
    bravo = gateway.tenant("bravo")
    deploy(alpha, "sless-alpha", "who", WHOAMI)
    deploy(bravo, "sless-bravo", "who", WHOAMI)
    a = httpx.get(f"{gateway.url}/fn/sless-alpha/who", timeout=60).json()
    b = httpx.get(f"{gateway.url}/fn/sless-bravo/who", timeout=60).json()
    # the sandbox's own view: nobody under bubblewrap; gVisor's root without capabilities
    # (sless.sandbox.gvisor.GVISOR_UID), the host uid below being what owns anything
    assert a["uid"] == b["uid"] == (GVISOR_UID if isolation == "gvisor" else 65534)
    assert a["code"] == b["code"] == ["handler.py"]
    wa, wb = worker_of(gateway, "sless-alpha", "who"), worker_of(gateway, "sless-bravo", "who")
    ua, ub = host_uid(wa.pid), host_uid(wb.pid)
    in_range = range(settings.uid_base, settings.uid_base + settings.uid_count)
    assert ua != ub
    assert ua in in_range
    assert ub in in_range
    ida, idb = wa.spec.host_ids, wb.spec.host_ids
    assert (ida.uid, idb.uid) == (ua, ub)

    # host-side: the code is under a directory that is root-owned, group the tenant's,
    # 0750 (its view, or a pre-started worker's own slot); sockets are the worker's
    run_dir = wa.spec.socket_dir.parent
    for worker, ids in ((wa, ida), (wb, idb)):
        code = worker.spec.code_dir
        assert code.is_relative_to(run_dir)
        guards = [
            (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode))
            for d in code.relative_to(run_dir).parents
            if (st := (run_dir / d).stat())
        ]
        assert (0, ids.gid, 0o750) in guards, guards
        st = worker.spec.socket_dir.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (ids.uid, 0o700)
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o711
    data_dir = gateway.settings.data_dir
    assert stat.S_IMODE(data_dir.stat().st_mode) & 0o044 == 0  # nobody else lists it

    # as bravo's uid on the host (after an escape): alpha's code, sockets and the data dir
    probe = (
        "import os\n"
        "for p in {paths!r}:\n"
        "    try:\n"
        "        os.listdir(p) if os.path.isdir(p) else open(p).read()\n"
        "        print('READ', p)\n"
        "    except OSError as e:\n"
        "        print(type(e).__name__)\n"
    )
    paths = [
        str(wa.spec.code_dir),
        str(wa.spec.code_dir / "handler.py"),
        str(wa.spec.socket_dir),
        str(run_dir),
        str(data_dir / "builds"),
        str(data_dir / "logs"),
        str(data_dir / "blobs"),
        str(data_dir),
    ]
    out = as_uid(idb, probe.format(paths=paths))
    assert "READ" not in out, out
    assert out.splitlines() == ["PermissionError"] * len(paths), out
    # and bravo's own code is readable by bravo's uid
    own = as_uid(idb, probe.format(paths=[str(wb.spec.code_dir / "handler.py")]))
    assert own.startswith("READ"), own


def test_the_uid_of_a_namespace_is_stable_and_never_reused(
    gateway: RunningGateway, database_url: str
) -> None:
    alpha = gateway.tenant("alpha")
    deploy(alpha, "sless-alpha", "who", WHOAMI)
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    ids = backend.launcher.uids.cached("sless-alpha")
    assert ids is not None

    async def as_after_a_restart() -> tuple[HostIds, HostIds]:
        pool = await create_pool(database_url)
        try:
            uids = SandboxUids(pool, UidRange.of(gateway.settings.sandbox))
            return await uids.ids("sless-alpha"), await uids.ids("sless-later")
        finally:
            await pool.close()

    again, later = asyncio.run(as_after_a_restart())
    assert again == ids
    assert later.uid > ids.uid
    assert later.gid > ids.gid


def test_the_range_may_not_overlap_subuid_or_host_users(tmp_path: Path) -> None:
    subuid = tmp_path / "subuid"
    subuid.write_text("alice:100000:65536\nsless:100065536:65536\n")
    UidRange(100_000_000, 65_536).check_host((subuid,))
    with pytest.raises(UidRangeError, match="overlaps"):
        UidRange(100_000_000, 65_537 + 65_536).check_host((subuid,))
    with pytest.raises(UidRangeError, match="overlaps"):
        UidRange(90_000, 20_000).check_host((subuid,))
    with pytest.raises(UidRangeError, match="host user root"):
        UidRange(0, 10).check_host(())
    with pytest.raises(UidRangeError, match="exhausted"):
        UidRange(100_000_000, 2).ids(2)


async def test_the_pool_hands_a_tenant_only_a_worker_of_its_own_uid(tmp_path: Path) -> None:
    require_sandbox()
    searchable(tmp_path)
    pool = PrestartPool(
        slots_dir=tmp_path / "slots",
        sockets_dir=tmp_path / "s",
        size=1,
        limits=LIMITS,
        runtimes_dir=RUNTIMES_DIR,
    )
    pool.start(TENANT_A)
    await pool.wait_filled()
    try:
        spec_b = make_spec(tmp_path / "b", limits=LIMITS, host_ids=TENANT_B)
        # bravo has no generic worker yet: alpha's is not given to it
        assert await pool.take(spec_b) is None
        assert pool.ready("python3.11", TENANT_A) == 1
        await pool.wait_filled()  # bravo's now exists too (it was wanted by the take)
        worker = await pool.take(spec_b)
        assert worker is not None
        try:
            assert worker.spec.host_ids == TENANT_B
            assert host_uid(worker.pid) == TENANT_B.uid
            seen = await run_probe(worker, "result = open('/code/handler.py').read()[:6]")
            assert seen["result"] == "\nimpor"
        finally:
            await worker.stop()
        spec_a = make_spec(tmp_path / "a", limits=LIMITS, host_ids=TENANT_A)
        worker = await pool.take(spec_a)
        assert worker is not None
        try:
            assert host_uid(worker.pid) == TENANT_A.uid
        finally:
            await worker.stop()
    finally:
        await pool.close()

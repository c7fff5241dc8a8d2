"""Attack: a tenant runs many busy workers to take the CPU from other tenants.

Every worker sits in its tenant's group of the cpu controller (``cpu/sless/<namespace>/
<worker>``) and every tenant group has the same ``cpu.shares``: under contention the
kernel divides CPU per tenant, not per worker. These tests read the cgroup files of real
workers; the latency this buys is measured by bench/tenants.py, not asserted here.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from pathlib import Path

import httpx
import pytest

from sless.config import Settings
from sless.sandbox import Limits, Worker
from sless.sandbox.cgroups import TENANT_CPU_SHARES, Cgroup
from sless.sandbox.gvisor import SENTRY_MEMORY_MB
from tests.conftest import RunningGateway
from tests.integration.sandbox.harness import alive, launch, make_spec, require_sandbox
from tests.support import deploy

pytestmark = pytest.mark.integration

CPU = Path("/sys/fs/cgroup/cpu/sless")
HELLO = {"handler.py": "def handle(event, context):\n    return 'hi'\n"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # this test is about where workers run, not about validation: semgrep stays off to
    # spare the shared CPU (the archive, entrypoint and text checks still run)
    settings.validation.static_enabled = False
    settings.validation.detonation_enabled = False  # the attack must run to be contained
    return settings


def cpu_path_of(pid: int) -> str:
    """The cpu controller's group of ``pid``, from the kernel's own view."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return path
    raise AssertionError(f"pid {pid} is in no cpu group")


def procs(group: Path) -> set[int]:
    return {int(pid) for pid in (group / "cgroup.procs").read_text().split()}


def unique(prefix: str) -> str:
    # cgroup directories are host-wide: never share a tenant group with a parallel test run
    return f"{prefix}{uuid.uuid4().hex[:8]}"


async def test_a_tenants_workers_share_one_cpu_group(tmp_path: Path, isolation: str) -> None:
    require_sandbox()
    busy, quiet = unique("sless-busy"), unique("sless-quiet")
    workers: list[Worker] = []
    try:
        for i in range(3):
            spec = make_spec(tmp_path / f"busy{i}")
            workers.append(await launch(dataclasses.replace(spec, namespace=busy)))
        spec = make_spec(tmp_path / "quiet")
        workers.append(await launch(dataclasses.replace(spec, namespace=quiet)))
        for tenant in (busy, quiet):
            shares = int((CPU / tenant / "cpu.shares").read_text())
            assert shares == TENANT_CPU_SHARES
        busy_dirs = sorted(p for p in (CPU / busy).iterdir() if p.is_dir())
        assert busy_dirs == sorted(w.cgroup_dirs["cpu"] for w in workers[:3])
        for worker, tenant in zip(workers, [busy, busy, busy, quiet], strict=True):
            assert worker.cgroup_reason.endswith("per-tenant cpu shares applied")
            memory = worker.cgroup_dirs["memory"]
            cpu = worker.cgroup_dirs["cpu"]
            assert cpu.parent == CPU / tenant
            in_cpu = procs(cpu)
            assert worker.pid in in_cpu
            assert len(in_cpu) >= 3  # bwrap, the sandbox's pid 1, the runtime
            # the same processes as the worker's memory group (the per-worker limits stay)
            assert in_cpu == procs(memory)
            # gVisor: the function's 128 MiB plus the Sentry's share (gvisor.host_limits)
            limit_mb = 128 + (SENTRY_MEMORY_MB if isolation == "gvisor" else 0)
            assert int((memory / "memory.limit_in_bytes").read_text()) == limit_mb * 1024 * 1024
            for pid in in_cpu:
                if alive(pid):
                    assert cpu_path_of(pid) == f"/sless/{tenant}/{cpu.name}"
        groups = [path for worker in workers for path in worker.cgroup_dirs.values()]
    finally:
        for worker in workers:
            await worker.stop()
    assert not [path for path in groups if path.exists()]
    for tenant in (busy, quiet):
        (CPU / tenant).rmdir()  # empty once the workers are gone


def test_gateway_workers_run_in_their_tenants_cpu_group(gateway: RunningGateway) -> None:
    one, two = unique("cpua"), unique("cpub")
    clients = {one: gateway.tenant(one), two: gateway.tenant(two)}
    for tenant, client in clients.items():
        for name in ("f", "g"):
            deploy(client, f"sless-{tenant}", name, HELLO)
            response = httpx.get(f"{gateway.url}/fn/sless-{tenant}/{name}", timeout=60)
            assert response.status_code == 200, response.text
    for tenant in clients:
        group = CPU / f"sless-{tenant}"
        assert int((group / "cpu.shares").read_text()) == TENANT_CPU_SHARES
        workers = {p.name: p for p in group.iterdir() if p.is_dir()}
        # each function has a worker, named <namespace>.<function>.<serial>, in the group
        for name in ("f", "g"):
            mine = [w for w in workers if w.startswith(f"sless-{tenant}.{name}.")]
            assert mine, sorted(workers)
            pids = set().union(*(procs(workers[w]) for w in mine))
            assert pids
            assert all(cpu_path_of(pid).startswith(f"/sless/sless-{tenant}/") for pid in pids)


def test_without_the_cpu_controller_limits_stay_and_a_warning_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a cgroup root that has the memory and pids controllers but no cpu (as on hosts that
    # do not mount it): the two limits are still written, CPU sharing is skipped, loudly
    for controller in ("memory", "pids"):
        (tmp_path / controller).mkdir()
        (tmp_path / controller / "cgroup.procs").write_text("")
    with caplog.at_level(logging.WARNING, logger="sless.sandbox.cgroups"):
        cgroup, reason = Cgroup.create(
            "w1", Limits(memory_mb=64, max_processes=8), tmp_path, tenant="sless-x"
        )
    assert cgroup is not None
    assert reason == "cgroup v1 memory and pids limits applied; no cpu shares"
    assert set(cgroup.dirs) == {"memory", "pids"}
    assert cgroup.dirs["pids"] == tmp_path / "pids/sless/w1"  # the name was free
    assert (cgroup.dirs["pids"] / "pids.max").read_text() == "8"
    assert (cgroup.dirs["memory"] / "memory.limit_in_bytes").read_text() == str(64 << 20)
    assert not (tmp_path / "cpu").exists()
    assert any("no per-tenant CPU shares" in r.getMessage() for r in caplog.records)

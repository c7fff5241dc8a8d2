"""The pre-started pool with real bubblewrap sandboxes: a generic worker becomes exactly the
worker of the function it is given, once, and never carries anything to another one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sless.sandbox import (
    Limits,
    PrestartPool,
    SandboxSpec,
    SpecializeError,
    address_space_mb,
    specialize,
)
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    TENANT_A,
    make_spec,
    require_sandbox,
    run_probe,
    searchable,
)

LIMITS = Limits(memory_mb=128, max_processes=32, max_open_files=128, tmp_size_mb=8)


@pytest.fixture
async def pool(tmp_path: Path) -> AsyncIterator[PrestartPool]:
    require_sandbox()
    searchable(tmp_path)
    prestart = PrestartPool(
        slots_dir=tmp_path / "slots",
        sockets_dir=tmp_path / "s",
        size=2,
        limits=LIMITS,
        runtimes_dir=RUNTIMES_DIR,
    )
    prestart.start(TENANT_A)
    await prestart.wait_filled()
    yield prestart
    await prestart.close()


def function_spec(workdir: Path, namespace: str, **kw: object) -> SandboxSpec:
    spec = make_spec(workdir, limits=kw.pop("limits", LIMITS), **kw)  # type: ignore[arg-type]
    return SandboxSpec(
        **{
            **{f: getattr(spec, f) for f in spec.__dataclass_fields__},
            "name": f"{namespace}.probe.{uuid.uuid4().hex[:6]}",
            "namespace": namespace,
        }
    )


async def test_a_prestarted_worker_becomes_the_function_it_is_given(
    pool: PrestartPool, tmp_path: Path
) -> None:
    spec = function_spec(tmp_path / "fn", "tenant-a", env={"GREETING": "hello"}, concurrency=3)
    worker = await pool.take(spec)
    assert worker is not None
    try:
        seen = await run_probe(
            worker,
            """
            import os, resource
            result = {
                "env": {k: v for k, v in os.environ.items()
                        if k == "GREETING" or k.startswith("SLESS_")},
                "code": sorted(os.listdir("/code")),
                "cwd": os.getcwd(),
                "as": resource.getrlimit(resource.RLIMIT_AS),
                "function": context.function, "namespace": context.namespace,
            }
            """,
        )
    finally:
        await worker.stop()
    result = seen["result"]
    assert result["env"]["GREETING"] == "hello"
    assert result["env"]["SLESS_FUNCTION"] == "probe"
    assert result["env"]["SLESS_NAMESPACE"] == "tenant-a"
    assert result["env"]["SLESS_CONCURRENCY"] == "3"
    assert "SLESS_DEPS_DIR" not in result["env"]
    assert result["code"] == ["handler.py"]
    assert result["cwd"] == "/code"
    limit = address_space_mb(spec) * 1024 * 1024
    assert result["as"] == [limit, limit]
    assert (result["function"], result["namespace"]) == ("probe", "tenant-a")
    assert pool.handed_out == 1


async def test_the_address_space_limit_cannot_be_raised_back_from_inside(
    pool: PrestartPool, tmp_path: Path
) -> None:
    worker = await pool.take(function_spec(tmp_path / "fn", "tenant-a"))
    assert worker is not None
    try:
        seen = await run_probe(
            worker,
            """
            import resource
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (hard * 4, hard * 4))
            result = "raised"
            """,
        )
    finally:
        await worker.stop()
    assert seen.get("raised") in ("ValueError", "PermissionError"), seen


async def test_the_functions_output_goes_to_its_own_log(pool: PrestartPool, tmp_path: Path) -> None:
    spec = function_spec(tmp_path / "fn", "tenant-a")
    worker = await pool.take(spec)
    assert worker is not None
    marker = uuid.uuid4().hex
    try:
        await run_probe(
            worker, f"import sys\nprint('out-{marker}')\nprint('err-{marker}', file=sys.stderr)"
        )
    finally:
        await worker.stop()
    log = spec.log_file.read_text()
    assert f"out-{marker}" in log
    assert f"err-{marker}" in log


async def test_a_specialized_worker_cannot_become_a_second_function(
    pool: PrestartPool, tmp_path: Path
) -> None:
    worker = await pool.take(function_spec(tmp_path / "a", "tenant-a"))
    assert worker is not None
    with pytest.raises(SpecializeError):
        await specialize(worker, function_spec(tmp_path / "b", "tenant-b"), timeout_s=10)
    assert worker.returncode is not None  # stopped, never handed on


async def test_no_state_passes_between_tenants_through_the_pool(
    pool: PrestartPool, tmp_path: Path
) -> None:
    first_spec = function_spec(tmp_path / "a", "tenant-a")
    first = await pool.take(first_spec)
    assert first is not None
    marker = uuid.uuid4().hex
    try:
        planted = await run_probe(
            first,
            f"""
            import os, sys
            open("/tmp/planted", "w").write("{marker}")
            os.environ["PLANTED"] = "{marker}"
            sys.modules["planted_{marker}"] = sys
            result = os.getpid()
            """,
        )
    finally:
        await first.stop()
    second = await pool.take(function_spec(tmp_path / "b", "tenant-b"))
    assert second is not None
    try:
        seen = await run_probe(
            second,
            f"""
            import os, sys
            result = {{
                "tmp": os.listdir("/tmp"),
                "env": "PLANTED" in os.environ,
                "module": "planted_{marker}" in sys.modules,
            }}
            """,
        )
    finally:
        await second.stop()
    assert planted["result"] is not None
    assert first.pid != second.pid
    assert seen["result"] == {"tmp": [], "env": False, "module": False}
    # the first worker's own directories are gone with it
    assert all(not d.exists() for d in first.owned_dirs)


async def test_the_worker_moves_into_the_tenants_cgroup_with_the_functions_memory(
    pool: PrestartPool, tmp_path: Path
) -> None:
    spec = function_spec(
        tmp_path / "fn",
        "tenant-c",
        limits=Limits(memory_mb=96, max_processes=32, max_open_files=128, tmp_size_mb=8),
    )
    worker = await pool.take(spec)
    assert worker is not None
    try:
        if not worker.cgroup_limited:
            pytest.skip(f"no cgroup limits on this host: {worker.cgroup_reason}")
        pids = worker.pids()
        assert pids
        dirs = worker.cgroup_dirs
        # named as a directly started worker of the function would be (the name is free)
        assert {d.name for d in dirs.values()} == {spec.name}
        assert dirs["cpu"].parent == Path("/sys/fs/cgroup/cpu/sless/tenant-c")
        for pid in pids:
            groups = Path(f"/proc/{pid}/cgroup").read_text()
            cpu = next(line for line in groups.splitlines() if ":cpu," in line or ":cpu:" in line)
            assert cpu.endswith(":/" + str(dirs["cpu"].relative_to("/sys/fs/cgroup/cpu"))), cpu
        memory = next(
            line.split(":", 2)[2]
            for line in Path(f"/proc/{min(pids)}/cgroup").read_text().splitlines()
            if ":memory:" in line
        )
        assert memory == "/" + str(dirs["memory"].relative_to("/sys/fs/cgroup/memory"))
        limit = dirs["memory"] / "memory.limit_in_bytes"
        assert int(limit.read_text()) == 96 * 1024 * 1024
    finally:
        await worker.stop()


async def test_specs_that_need_more_than_can_be_handed_over_start_directly(
    pool: PrestartPool, tmp_path: Path
) -> None:
    assert await pool.take(function_spec(tmp_path / "n", "t", network=True)) is None
    assert await pool.take(function_spec(tmp_path / "j", "t", runtime="nodejs20")) is None
    other_limits = Limits(memory_mb=128, max_processes=64, max_open_files=128, tmp_size_mb=8)
    assert await pool.take(function_spec(tmp_path / "l", "t", limits=other_limits)) is None
    assert pool.handed_out == 0

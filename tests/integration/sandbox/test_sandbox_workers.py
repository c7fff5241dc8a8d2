"""Workers in real bubblewrap: start, invoke over the Unix socket, check, stop, clean up."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sless.sandbox import (
    Limits,
    Worker,
    WorkerStartError,
    check_handler,
    sandbox_available,
    start_worker,
)
from tests.integration.sandbox.harness import (
    RUNTIMES_DIR,
    alive,
    groups_named,
    launch,
    make_spec,
    request,
    run_probe,
)

pytestmark = pytest.mark.integration


def test_sandbox_is_available_here() -> None:
    ok, reason = sandbox_available("bwrap")
    assert ok, reason


def test_missing_bwrap_says_how_to_install() -> None:
    ok, reason = sandbox_available("bwrap-not-installed-here")
    assert not ok
    assert "apt-get install bubblewrap" in reason


async def test_python_worker_answers_over_the_unix_socket(probe_worker: Worker) -> None:
    data = await run_probe(
        probe_worker,
        """
        import os, sys
        result = {"cwd": os.getcwd(), "exe": sys.executable, "path": sys.path[0],
                  "fn": context.function, "ns": context.namespace}
        """,
    )
    assert data["result"]["cwd"] == "/code"
    assert data["result"]["path"] == "/code"
    assert data["result"]["fn"] == "probe"
    assert data["result"]["ns"] == "tests"


async def test_host_site_packages_are_not_importable(probe_worker: Worker) -> None:
    data = await run_probe(probe_worker, "import aiohttp")
    assert data["raised"] == "ModuleNotFoundError"


async def test_worker_is_in_its_cgroup_and_cleaned_up(tmp_path: Path) -> None:
    worker = await launch(make_spec(tmp_path))
    assert worker.cgroup_limited, worker.cgroup_reason
    pids = worker.pids()
    assert worker.pid in pids
    assert len(pids) >= 3  # bwrap, the sandbox's pid 1, the runtime
    dirs = worker.cgroup_dirs
    assert {d.parent for d in dirs.values()} >= {
        Path("/sys/fs/cgroup/pids/sless"),
        Path("/sys/fs/cgroup/memory/sless"),
    }
    assert (dirs["pids"] / "pids.max").read_text().strip() == "32"
    assert int((dirs["memory"] / "memory.limit_in_bytes").read_text()) == 128 * 1024 * 1024
    assert {int(p) for p in (dirs["memory"] / "cgroup.procs").read_text().split()} == pids
    await worker.stop()
    assert not [d for d in dirs.values() if d.exists()]
    assert worker.cgroup_dirs == {}
    assert not worker.socket_path.exists()
    assert not [pid for pid in pids if alive(pid)]


async def test_node_worker_runs_in_the_sandbox(tmp_path: Path) -> None:
    worker = await launch(make_spec(tmp_path, runtime="nodejs20"))
    try:
        status, data = await request(
            worker,
            "POST",
            "/x",
            body={
                "code": "return { uid: process.getuid(), cwd: process.cwd(), "
                "hosts: require('fs').readdirSync('/') }"
            },
        )
    finally:
        await worker.stop()
    assert status == 200
    assert data["result"]["uid"] == 65534
    assert data["result"]["cwd"] == "/code"
    assert "home" not in data["result"]["hosts"]


async def test_deps_dir_is_importable_and_read_only(tmp_path: Path) -> None:
    deps = tmp_path / "deps"
    (deps / "greeter").mkdir(parents=True)
    (deps / "greeter" / "__init__.py").write_text("HELLO = 'from deps'\n")
    worker = await launch(make_spec(tmp_path, deps_dir=deps))
    try:
        data = await run_probe(
            worker,
            """
            import greeter
            try:
                open("/deps/x", "w")
                wrote = True
            except OSError:
                wrote = False
            result = [greeter.HELLO, wrote]
            """,
        )
    finally:
        await worker.stop()
    assert data["result"] == ["from deps", False]


async def test_logs_go_to_the_log_file(probe_worker: Worker) -> None:
    await run_probe(probe_worker, "print('log line from the sandbox')")
    assert "log line from the sandbox" in probe_worker.spec.log_file.read_text()


async def test_start_failure_reports_the_log_tail(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    (spec.code_dir / "handler.py").write_text("raise RuntimeError('broken at import 7')\n")
    with pytest.raises(WorkerStartError, match="broken at import 7") as info:
        await launch(spec)
    assert "exited with status 1" in str(info.value)
    assert not groups_named(spec.name)


async def test_start_timeout_kills_the_worker(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    (spec.code_dir / "handler.py").write_text("import time\ntime.sleep(60)\n")
    started = time.monotonic()
    with pytest.raises(WorkerStartError, match="not ready within 1s"):
        await start_worker(spec, runtimes_dir=RUNTIMES_DIR, start_timeout_s=1)
    assert time.monotonic() - started < 10
    assert not groups_named(spec.name)


@pytest.mark.parametrize("runtime", ["python3.11", "nodejs20"])
async def test_check_handler_ok(runtime: str, tmp_path: Path) -> None:
    spec = make_spec(tmp_path, runtime=runtime)  # type: ignore[arg-type]
    ok, message = await check_handler(spec, runtimes_dir=RUNTIMES_DIR)
    assert (ok, message) == (True, "handler.handle is callable")


@pytest.mark.parametrize(
    ("runtime", "source", "expected"),
    [
        ("python3.11", "import no_such_dependency\n", "ModuleNotFoundError: No module named"),
        ("python3.11", "def other(e, c): pass\n", "'handler' has no attribute 'handle'"),
        ("python3.11", "def handle(:\n", "SyntaxError in handler.py line 1"),
        ("nodejs20", "require('no-such-dependency');\n", "Cannot find module 'no-such-dependency'"),
        ("nodejs20", "exports.other = () => 1;\n", "'handler' does not export 'handle'"),
    ],
)
async def test_check_handler_reports_failures(
    runtime: str, source: str, expected: str, tmp_path: Path
) -> None:
    spec = make_spec(tmp_path, runtime=runtime)  # type: ignore[arg-type]
    name = "handler.py" if runtime == "python3.11" else "handler.js"
    (spec.code_dir / name).write_text(source)
    ok, message = await check_handler(spec, runtimes_dir=RUNTIMES_DIR)
    assert not ok
    assert expected in message
    assert str(tmp_path) not in message


async def test_check_handler_missing_file(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    (spec.code_dir / "handler.py").unlink()
    ok, message = await check_handler(spec, runtimes_dir=RUNTIMES_DIR)
    assert not ok
    assert message == "handler file 'handler.py' not found in the code directory"


async def test_check_handler_times_out(tmp_path: Path) -> None:
    spec = make_spec(tmp_path)
    (spec.code_dir / "handler.py").write_text("while True:\n    pass\n")
    ok, message = await check_handler(spec, runtimes_dir=RUNTIMES_DIR, timeout_s=1)
    assert (ok, message) == (False, "the handler did not load within 1s")


async def test_unsafe_mode_runs_without_bwrap_but_scrubs_the_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLESS_ADMIN_TOKEN", "admin-token-should-not-leak")
    spec = make_spec(tmp_path, env={"VISIBLE": "yes"})
    worker = await start_worker(
        spec, runtimes_dir=RUNTIMES_DIR, bwrap="no-bwrap", unsafe_no_sandbox=True
    )
    try:
        data = await run_probe(
            worker,
            """
            import os, resource
            result = [dict(os.environ), resource.getrlimit(resource.RLIMIT_NOFILE)[0]]
            """,
        )
    finally:
        await worker.stop()
    env, nofile = data["result"]
    assert env["VISIBLE"] == "yes"
    assert "SLESS_ADMIN_TOKEN" not in env
    assert nofile == 128


async def test_concurrency_two_serves_in_parallel(tmp_path: Path) -> None:
    worker = await launch(
        make_spec(tmp_path, concurrency=2, limits=Limits(memory_mb=128, max_processes=32))
    )
    try:
        started = time.monotonic()
        await asyncio.gather(*(run_probe(worker, "import time; time.sleep(0.5)") for _ in range(2)))
        elapsed = time.monotonic() - started
    finally:
        await worker.stop()
    assert elapsed < 0.95

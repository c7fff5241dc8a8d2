"""Launching real sandboxed workers for the integration and security tests.

The probe handler runs the Python code it is sent and returns ``result``: the tenant's
code is the attacker, so each attack test sends exactly the code it is about.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import textwrap
import uuid
from pathlib import Path
from typing import Any

import aiohttp

from sless.sandbox import (
    Gvisor,
    HostIds,
    Limits,
    Runtime,
    SandboxSpec,
    Worker,
    default_runtimes_dir,
    reachable_by_others,
    runsc_available,
    sandbox_available,
    start_worker,
)

RUNTIMES_DIR = default_runtimes_dir()
#: what ``launch`` runs workers in: set per test by the ``isolation`` fixture of
#: tests/security (None: bubblewrap)
ISOLATION: Gvisor | None = None
#: host ids of the tests' tenants, in the default range (SLESS_SANDBOX_UID_BASE)
TENANT_A = HostIds(uid=100_060_001, gid=100_060_001)
TENANT_B = HostIds(uid=100_060_002, gid=100_060_002)

PROBE_PY = """
import traceback


def handle(event, context):
    scope = {"event": event, "context": context}
    try:
        exec(event["body"]["code"], scope)
    except BaseException as e:  # report the attack's outcome, whatever it is
        return {"raised": type(e).__name__, "message": str(e)[:500]}
    return {"result": scope.get("result")}
"""

PROBE_JS = r"""
exports.handle = async (event, context) => {
  try {
    const fn = new Function('event', 'context', 'require', event.body.code);
    return { result: await fn(event, context, require) };
  } catch (e) {
    return { raised: e && e.name, message: String(e && e.message).slice(0, 500) };
  }
};
"""


def require_sandbox() -> None:
    ok, reason = sandbox_available("bwrap")
    if not ok:
        raise RuntimeError(reason)


def write_probe(code_dir: Path, runtime: Runtime = "python3.11") -> Path:
    code_dir.mkdir(parents=True, exist_ok=True)
    if runtime == "python3.11":
        (code_dir / "handler.py").write_text(PROBE_PY)
    else:
        (code_dir / "handler.js").write_text(PROBE_JS)
    return code_dir


def make_spec(
    workdir: Path,
    *,
    runtime: Runtime = "python3.11",
    limits: Limits | None = None,
    env: dict[str, str] | None = None,
    network: bool = False,
    concurrency: int = 1,
    deps_dir: Path | None = None,
    entrypoint: str = "handler.handle",
    host_ids: HostIds | None = TENANT_A,
) -> SandboxSpec:
    workdir.mkdir(parents=True, exist_ok=True)
    searchable(workdir)
    code = workdir / "code"
    if not code.exists():
        write_probe(code, runtime)
    return SandboxSpec(
        name=f"test.{uuid.uuid4().hex[:10]}",
        runtime=runtime,
        code_dir=code,
        deps_dir=deps_dir,
        entrypoint=entrypoint,
        env=env or {},
        socket_dir=workdir / "sock",
        log_file=workdir / "worker.log",
        limits=limits or Limits(memory_mb=128, max_processes=32, max_open_files=128, tmp_size_mb=8),
        network=network,
        timeout_s=30,
        concurrency=concurrency,
        function="probe",
        namespace="tests",
        host_ids=host_ids,
    )


def searchable(path: Path) -> None:
    """Let the workers' uids reach ``path`` (bubblewrap resolves bind sources as them):
    pytest's base temporary directory is 0700."""
    for directory in [*reversed(path.parents), path]:
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            os.chmod(
                directory, stat.S_IMODE(mode) | stat.S_IXOTH | stat.S_IROTH * (directory == path)
            )


async def launch(spec: SandboxSpec) -> Worker:
    return await start_worker(
        spec,
        runtimes_dir=RUNTIMES_DIR,
        bwrap="bwrap",
        unsafe_no_sandbox=False,
        start_timeout_s=20,
        isolation=ISOLATION,
    )


@functools.cache
def built_runsc() -> Gvisor | None:
    """gVisor where it is built, as the node tier finds it: ``SLESS_SANDBOX_RUNSC``, runsc
    on PATH, or the one ``scripts/kube-testenv build`` made (its cache is under a 0700
    home: copied once where the workers' uids can execute it). None: not built here."""
    found = os.environ.get("SLESS_SANDBOX_RUNSC") or shutil.which("runsc")
    if found is None:
        script = RUNTIMES_DIR.parent / "scripts" / "kube-testenv"
        done = subprocess.run([script, "bin"], capture_output=True, text=True, check=False)
        candidate = Path(done.stdout.strip()) / "runsc"
        if done.returncode != 0 or not candidate.is_file():
            return None
        found = str(candidate)
    path = Path(found).resolve()
    if os.geteuid() == 0 and not reachable_by_others(path):
        stamp = hashlib.sha256(f"{path}:{path.stat().st_mtime_ns}".encode()).hexdigest()[:12]
        copy = Path(f"/tmp/sless-test-runsc-{stamp}/runsc")
        if not copy.exists():
            copy.parent.mkdir(mode=0o755, exist_ok=True)
            shutil.copy(path, copy.with_suffix(".part"))
            copy.with_suffix(".part").chmod(0o755)
            copy.with_suffix(".part").rename(copy)
        path = copy
    gvisor, reason = runsc_available(str(path), "auto")
    if gvisor is None:
        raise RuntimeError(f"runsc is built but unusable: {reason}")
    return gvisor


async def request(
    worker: Worker,
    method: str = "GET",
    path: str = "/",
    *,
    body: Any = None,
    timeout_s: float = 30,
) -> tuple[int, Any]:
    connector = aiohttp.UnixConnector(path=str(worker.socket_path))
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
        session.request(method, f"http://worker{path}", json=body) as response,
    ):
        text = await response.text()
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process. A dead sandbox pid 1 can linger as a zombie until
    the host's init reaps it (it is reparented there when bubblewrap dies): that is dead."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status and "\nState:\tX" not in status


async def run_probe(worker: Worker, code: str, timeout_s: float = 30) -> dict[str, Any]:
    """Run ``code`` inside the worker; returns ``{"result": ...}`` or ``{"raised": ...}``."""
    status, data = await request(
        worker, "POST", "/probe", body={"code": textwrap.dedent(code)}, timeout_s=timeout_s
    )
    if status != 200 or not isinstance(data, dict):
        raise AssertionError(f"probe failed: {status} {data!r}")
    return data


def groups_named(name: str) -> list[Path]:
    """Every cgroup on the host made for a worker ``name``: ``name`` itself or ``name``
    with the suffix that made it unique (``sless.sandbox.cgroups``). For a worker that
    never started; a running one's own groups are ``Worker.cgroup_dirs``."""
    root = Path("/sys/fs/cgroup")
    parents = [root / "memory/sless", root / "pids/sless", *root.glob("cpu/sless/*/")]
    return [
        path
        for parent in parents
        for path in [parent / name, *parent.glob(f"{name}.*")]
        if path.is_dir()
    ]

"""A real embedded platform (`sless up`) for the benchmarks: started, awaited, stopped."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "sl_a_bench-admin-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Platform:
    url: str
    #: the gateway process (`sless up`)
    pid: int
    #: its TMPDIR: the worker sockets are under ``sless-run-*/`` here, and nowhere else
    tmp: Path

    def worker_sockets(self) -> list[Path]:
        return sorted(self.tmp.glob("sless-run-*/*/worker.sock"))

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


@contextlib.contextmanager
def running_platform(extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """`sless up` on a free port with a fresh data dir; yields its URL once it is ready."""
    with started_platform(extra_env) as platform:
        yield platform.url


@contextlib.contextmanager
def started_platform(extra_env: dict[str, str] | None = None) -> Iterator[Platform]:
    """`sless up` on a free port with a fresh data dir and TMPDIR, once it is ready.

    The admin token is ``ADMIN``. Exits the benchmark with the server's log when the
    platform does not come up within two minutes.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (
        tempfile.TemporaryDirectory(prefix="sless-bench-") as data,
        # short: Unix socket paths have at most 108 bytes
        tempfile.TemporaryDirectory(prefix="sb-", dir="/tmp") as tmp,
    ):
        # the gateway puts its worker sockets under TMPDIR only where the workers' own uids
        # can reach it (sless.backends.local, issue 26), else under /tmp with every other
        # platform's: so that ``worker_sockets`` finds this platform's and only these
        os.chmod(tmp, 0o755)
        env = {
            **os.environ,
            "SLESS_ADMIN_TOKEN": ADMIN,
            "SLESS_DATA_DIR": data,
            "TMPDIR": tmp,
            # the per-tenant limits protect tenants from each other; a benchmark is one
            # tenant that wants to find the platform's own limits
            "SLESS_LIMITS_API_RATE_PER_S": "100000",
            "SLESS_LIMITS_API_BURST": "100000",
            "SLESS_LIMITS_INVOKE_RATE_PER_S": "1000000",
            "SLESS_LIMITS_INVOKE_BURST": "1000000",
            **(extra_env or {}),
        }
        log_path = Path(data) / "server.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "sless.cli", "up", "--port", str(port)],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                deadline = time.monotonic() + 120
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        if httpx.get(f"{url}/readyz").status_code == 200:
                            break
                    if server.poll() is not None or time.monotonic() > deadline:
                        sys.exit("the platform did not start: " + log_path.read_text())
                    time.sleep(0.2)
                yield Platform(url=url, pid=server.pid, tmp=Path(tmp))
            finally:
                server.terminate()
                server.wait(timeout=60)
                # the server's log outlives the run where SLESS_BENCH_SERVER_LOG names a file
                if kept := os.environ.get("SLESS_BENCH_SERVER_LOG"):
                    shutil.copyfile(log_path, kept)
                    shutil.copytree(Path(data) / "logs", f"{kept}.functions", dirs_exist_ok=True)


def admin_client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)


def onboard(admin: httpx.Client, tenant: str) -> httpx.Client:
    token = admin.post("/v1/admin/tenants", json={"name": tenant}).json()["token"]
    return httpx.Client(
        base_url=admin.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=120
    )


def zip_files(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in sorted(files.items()):
            archive.writestr(name, text)
    return buffer.getvalue()


def deploy(
    client: httpx.Client, namespace: str, name: str, files: dict[str, str], spec: dict[str, object]
) -> None:
    """PUT the spec, upload the code, wait until the function is Ready."""
    path = f"/v1/namespaces/{namespace}/functions/{name}"
    client.put(path, json=spec).raise_for_status()
    client.post(
        path + "/upload", content=zip_files(files), headers={"Content-Type": "application/zip"}
    ).raise_for_status()
    deadline = time.monotonic() + 300
    while (phase := client.get(path).raise_for_status().json()["status"]["phase"]) != "Ready":
        if phase in ("Failed", "Rejected") or time.monotonic() > deadline:
            sys.exit(f"{namespace}/{name} did not become Ready: {client.get(path).text}")
        time.sleep(0.05)

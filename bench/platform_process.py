"""A real embedded platform (`sless up`) for the benchmarks: started, awaited, stopped."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
ADMIN = "sl_a_bench-admin-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_platform(extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """`sless up` on a free port with a fresh data dir; yields its URL once it is ready.

    The admin token is ``ADMIN``. Exits the benchmark with the server's log when the
    platform does not come up within two minutes.
    """
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="sless-bench-") as data:
        env = {
            **os.environ,
            "SLESS_ADMIN_TOKEN": ADMIN,
            "SLESS_DATA_DIR": data,
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
                yield url
            finally:
                server.terminate()
                server.wait(timeout=60)


def admin_client(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)

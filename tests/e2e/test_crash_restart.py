"""``sless up`` killed with SIGKILL, started again on the same data directory, stopped.

Defect: every crash left its embedded PostgreSQL running for good. The restart adopted
the old postmaster (pgserver found it running) but, because the dead process was still
listed as a holder, never stopped it at exit. After two crashes and a clean stop, no
postmaster may be left on the data directory, and what was written before the crashes
is still there. A second ``sless up`` on a directory in use is refused with a clear error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port
from tests.faults.harness import postmasters

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

SLESS = str(Path(sys.executable).parent / "sless")
ADMIN_TOKEN = "crash-test-admin-token-" + "k" * 20


class Up:
    def __init__(self, data: Path, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "SLESS_ADMIN_TOKEN": ADMIN_TOKEN}
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [SLESS, "up", "--data-dir", str(data), "--port", str(port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed whole below
            )
        self.log = log

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        raise AssertionError(f"sless up did not become ready:\n{self.log.read_text()[-3000:]}")

    def crash(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=90)


def test_crash_restart_and_stop_leave_no_postmaster(home: Path) -> None:
    data, log = home / "data", home / "up.log"
    pg_dir = data / "pg"
    port = free_port()
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    first = Up(data, port, log)
    first.wait_ready()
    created = httpx.post(f"{first.url}/v1/admin/tenants", json={"name": "before"}, headers=admin)
    assert created.status_code == 201, created.text
    first.crash()
    assert postmasters(pg_dir), "the crash left the postmaster running (as a crash does)"

    second = Up(data, port, log)
    second.wait_ready()
    # a second platform on the same directory while this one runs: refused, clearly
    refused = subprocess.run(
        [SLESS, "up", "--data-dir", str(data), "--port", str(free_port())],
        env={**os.environ, "SLESS_ADMIN_TOKEN": ADMIN_TOKEN},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1
    assert f"is in use by pid {second.process.pid}" in refused.stderr, refused.stderr
    second.crash()

    third = Up(data, port, log)
    third.wait_ready()
    tenants = httpx.get(f"{third.url}/v1/admin/tenants", headers=admin).json()["tenants"]
    assert [t["tenant"] for t in tenants] == ["before"]
    assert third.stop() == 0
    assert "Stopping embedded PostgreSQL" in log.read_text()
    deadline = time.monotonic() + 30
    while postmasters(pg_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert postmasters(pg_dir) == [], log.read_text()[-3000:]

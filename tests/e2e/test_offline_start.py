"""``scripts/run`` on a machine with no network at all, started twice.

Defect: ``scripts/setup`` asked ``semgrep --version`` whether semgrep was installed, and
that waits ~100 s for semgrep's online version check to time out, on every start. The test
runs the README's command inside a network namespace of its own with nothing but loopback
(``unshare --net``), so no address outside it is reachable, and records every semgrep
invocation through a shim: starting must never run semgrep, and the platform must become
ready and stop cleanly, both times.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]

# one start inside the namespace: wait for /readyz (bounded), then SIGTERM and report
_START = """
scripts/run --port "$PORT" --data-dir "$DATA" >>"$LOG" 2>&1 &
pid=$!
ready=no
for _ in $(seq 1 900); do
  if python3 -c "import urllib.request as u; u.urlopen('$URL', timeout=1)" 2>/dev/null; then
    ready=yes; break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
echo "ready=$ready"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
echo "exit=$?"
"""
_SCRIPT = f"""
set -u
ip link set lo up
echo "routes=[$(ip -o route show | tr '\\n' ' ')]"
{_START}
{_START}
"""


def _uv_dir(uv: str, *what: str) -> str:
    command = [uv, *what, "dir"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="unshare --net needs root")
def test_scripts_run_starts_twice_with_no_network_and_never_runs_semgrep() -> None:
    real_bin = Path.home() / ".local/bin"
    real_semgrep = shutil.which("semgrep", path=str(real_bin)) or shutil.which("semgrep")
    real_uv = shutil.which("uv", path=str(real_bin)) or shutil.which("uv")
    assert real_semgrep, "scripts/setup installs semgrep first"
    assert real_uv, "scripts/setup installs uv first"
    tool_dir, cache_dir = _uv_dir(real_uv, "tool"), _uv_dir(real_uv, "cache")
    home = Path(tempfile.mkdtemp(prefix="sless-offline-"))
    port = free_port()
    try:
        calls = home / "semgrep-calls.log"
        calls.touch()
        bin_dir = home / ".local/bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "uv").symlink_to(real_uv)
        shim = bin_dir / "semgrep"
        shim.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real_semgrep} "$@"\n')
        shim.chmod(0o755)
        env = {
            **os.environ,
            # scripts/setup puts $HOME/.local/bin first: the shim is what it finds
            "HOME": str(home),
            "UV_TOOL_DIR": tool_dir,
            "UV_CACHE_DIR": cache_dir,
            "PORT": str(port),
            "URL": f"http://127.0.0.1:{port}/readyz",
            "DATA": str(home / "data"),
            "LOG": str(home / "run.log"),
        }
        env.pop("SLESS_ADMIN_TOKEN", None)
        result = subprocess.run(
            ["unshare", "--net", "bash", "-c", _SCRIPT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=540,
        )
        output = result.stdout + result.stderr
        log = (home / "run.log").read_text() if (home / "run.log").exists() else ""
        # the namespace had loopback only: nothing outside this machine was reachable
        assert "routes=[]" in output, output
        assert output.count("ready=yes") == 2, f"{output}\n{log[-3000:]}"
        assert output.count("exit=0") == 2, f"{output}\n{log[-3000:]}"
        assert calls.read_text() == "", "starting ran semgrep: " + calls.read_text()
    finally:
        shutil.rmtree(home, ignore_errors=True)

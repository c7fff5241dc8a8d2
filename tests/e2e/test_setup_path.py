"""After ``scripts/run`` (which runs ``scripts/setup``), the README's ``uv run sless ...``
works in a new terminal (issue 31: uv went to ``~/.local/bin``, not on a login PATH, and a
fresh shell answered ``uv: command not found``).

As root, setup links uv into ``SLESS_BIN_DIR`` (``/usr/local/bin`` by default, here a
temporary directory standing for it); where it cannot, it prints the line to add.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
#: a login shell's PATH, without ~/.local/bin
LOGIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def _setup(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("uv", path=LOGIN_PATH):
        pytest.fail("uv is on the login PATH of this machine: the test would prove nothing")
    env = {**os.environ, "PATH": LOGIN_PATH, "SLESS_BIN_DIR": str(bin_dir)}
    return subprocess.run(
        ["scripts/setup"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )


def test_a_fresh_shell_finds_uv_after_setup(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    setup = _setup(bin_dir)
    assert f"linked {bin_dir}/uv" in setup.stderr
    fresh = subprocess.run(  # a new terminal: the login PATH plus the linked directory
        ["sh", "-c", "uv --version"],
        env={"PATH": f"{bin_dir}:{LOGIN_PATH}", "HOME": os.environ["HOME"]},
        capture_output=True,
        text=True,
    )
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.startswith("uv ")


def test_where_it_cannot_link_it_prints_the_line(tmp_path: Path) -> None:
    setup = _setup(tmp_path / "missing")
    assert "add this line to your ~/.profile" in setup.stderr
    assert 'export PATH="' in setup.stderr

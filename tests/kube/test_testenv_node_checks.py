"""The node's fast checks: what a build cannot make is checked before anything is built,
and a second node on the same machine is refused by name (two would share the kubepods
cgroups, the host sysctls and the CNI state)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.kube

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kube-testenv"
EXIT_SECOND_NODE = 4


@pytest.fixture
def other_node() -> Iterator[str]:
    """A network namespace named as another node's is (a real one, removed afterwards)."""
    name = f"sless-node-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def test_a_second_node_is_refused_before_anything_starts(other_node: str, tmp_path: Path) -> None:
    node_dir = tmp_path / "node"
    proc = subprocess.run(
        [str(SCRIPT), "start", "--no-build", "--node", str(node_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == EXIT_SECOND_NODE, proc.stderr
    assert "another node is running on this machine" in proc.stderr
    assert other_node in proc.stderr
    assert not (node_dir / "node.env").exists()
    own = hashlib.sha256(str(node_dir).encode()).hexdigest()[:8]
    assert not Path(f"/run/netns/sless-node-{own}").exists()


def _path_without(tmp_path: Path, missing: str) -> str:
    """A PATH holding every tool of this machine's PATH except ``missing``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for entry in [*os.environ["PATH"].split(os.pathsep), "/usr/local/go/bin"]:
        folder = Path(entry)
        if not folder.is_dir():
            continue
        for tool in folder.iterdir():
            link = bindir / tool.name
            if tool.name != missing and not link.exists() and os.access(tool, os.X_OK):
                link.symlink_to(tool)
    return str(bindir)


def test_build_node_checks_its_tools_before_building_anything(tmp_path: Path) -> None:
    if shutil.which("go") is None and not Path("/usr/local/go/bin/go").exists():
        pytest.fail("go is needed to run kube-testenv (install Go)")
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        "PATH": _path_without(tmp_path, "nsenter"),
        "KUBE_TESTENV_BIN": str(cache),
    }
    proc = subprocess.run(
        [str(SCRIPT), "build", "--node"], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode != 0
    assert "a node needs nsenter on PATH" in proc.stderr
    assert "building" not in proc.stderr  # nothing was built before the check failed
    assert not cache.exists() or not any(p for p in cache.iterdir() if p.name != ".build.lock")

"""A build cut off (a crash, a kill) leaves its staging directory; the next start removes
it, but never one young enough to belong to a build another process is running."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from sless.backends.local.building import Builder
from sless.config import Settings
from sless.store import LocalBlobStore


def _aged(path: Path, seconds: float) -> Path:
    moment = path.lstat().st_mtime - seconds
    os.utime(path, (moment, moment), follow_symlinks=False)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="the tenants' work directory is root's")
def test_start_removes_what_cut_off_builds_left(tmp_path: Path) -> None:
    settings = Settings()
    root = tmp_path / "data" / "builds"
    root.mkdir(parents=True)
    for path in (tmp_path, tmp_path / "data"):
        path.chmod(0o755)
    work = tmp_path / "data" / "build-work"
    tenant = work / "t100000401"
    (work / "net").mkdir(parents=True)
    tenant.mkdir()
    old = settings.build.timeout_s + 120
    left = _aged(Path(tempfile.mkdtemp(prefix=".python3.11-abc.", dir=tenant)), old)
    running = Path(tempfile.mkdtemp(prefix=".nodejs20-def.", dir=tenant))
    (tenant / "cache").mkdir()
    cache = _aged(tenant / "cache", old)
    (work / "net" / "1-0.sock").touch()
    socket = _aged(work / "net" / "1-0.sock", old)
    (root / ".python3.11-abc.moving").mkdir()
    moving = _aged(root / ".python3.11-abc.moving", old)
    (root / "python3.11-abc").mkdir()
    done = _aged(root / "python3.11-abc", old)

    builder = Builder(root, LocalBlobStore(tmp_path / "blobs"), settings.build, settings.validation)
    builder.start(tmp_path / "data")  # the run dir, when the data dir is not searchable
    assert builder.work == work

    assert not left.exists()
    assert not moving.exists()
    assert not socket.exists()
    assert running.is_dir(), "a build younger than the build timeout may be running"
    assert cache.is_dir()
    assert done.is_dir()

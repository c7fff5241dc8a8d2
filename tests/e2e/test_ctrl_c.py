"""Ctrl-C of ``sless up``, as a terminal sends it (SIGINT to the whole process group).

Before, the log could end with click's ``Aborted!`` (a second Ctrl-C while PostgreSQL
stopped raised KeyboardInterrupt out of the stop), which reads like a crash. Now the stop
finishes, says ``sless stopped cleanly`` and exits 0, and no postmaster outlives it.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.faults.harness import Platform, postmasters

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]


@pytest.mark.parametrize("presses", [1, 3])
def test_ctrl_c_stops_cleanly(home: Path, presses: int) -> None:
    platform = Platform(home / "data")
    platform.start()
    assert platform.process is not None
    for _ in range(presses):  # an impatient user presses again while it stops
        os.killpg(platform.process.pid, signal.SIGINT)
        time.sleep(0.3)
    status = platform.process.wait(timeout=120)
    log = platform.log_tail()
    assert status == 0, log
    assert "Aborted!" not in log
    assert "Traceback" not in log
    assert log.rstrip().endswith("sless stopped cleanly"), log
    assert postmasters(home / "data" / "pg") == []

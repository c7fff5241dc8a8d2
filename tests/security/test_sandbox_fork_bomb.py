"""Attack: a fork bomb. The pids cgroup (and RLIMIT_NPROC, when the gateway is not host
root) keeps the worker's process count bounded, and stopping the worker ends them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from sless.sandbox import Limits
from tests.integration.sandbox.harness import alive, launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration

FORK_BOMB = """
import os, time
forked, failure = 0, None
for _ in range(300):  # bounded, so a broken sandbox cannot take the CI host down
    try:
        pid = os.fork()
    except OSError as e:
        failure = e.errno
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    forked += 1
result = {"forked": forked, "errno": failure}
"""


async def test_fork_bomb_is_contained(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path, limits=Limits(memory_mb=128, max_processes=16)))
    try:
        data = await run_probe(worker, FORK_BOMB)
        found = data["result"]
        assert found["errno"] == 11  # EAGAIN: the limit said no
        assert found["forked"] < 16
        assert len(worker.pids()) <= 16
    finally:
        pids = worker.pids()
        await worker.stop()
    assert len(pids) > 10  # the bomb did run
    assert not [pid for pid in pids if alive(pid)]

"""Attack: a fork bomb. The pids cgroup (and RLIMIT_NPROC, when the gateway is not host
root) keeps the worker's process count bounded, and stopping the worker ends them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from sless.sandbox import Limits
from sless.sandbox.gvisor import host_limits
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


async def test_fork_bomb_is_contained(tmp_path: Path, isolation: str) -> None:
    require_sandbox()
    limits = Limits(memory_mb=128, max_processes=16)
    # host tasks: the bomb's processes (bubblewrap); gVisor's own threads, the bomb's
    # processes being Sentry tasks that the limit caps inside (forked < 16 below)
    host_bound = (host_limits(limits) if isolation == "gvisor" else limits).max_processes
    worker = await launch(make_spec(tmp_path, limits=limits))
    try:
        data = await run_probe(worker, FORK_BOMB)
        found = data["result"]
        assert found["errno"] == 11  # EAGAIN: the limit said no
        assert found["forked"] < 16
        assert len(worker.pids()) <= host_bound
    finally:
        pids = worker.pids()
        await worker.stop()
    assert len(pids) > 10  # the bomb did run
    assert not [pid for pid in pids if alive(pid)]

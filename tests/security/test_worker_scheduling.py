"""Tenant code never preempts the gateway when it wakes.

A worker wakes on every call (the gateway's write to its socket). Under the default
policy the kernel lets a task that wakes preempt the one that woke it: the gateway, the
one process every tenant's calls go through, was switched out on about every other call
under load (0.45-0.55 involuntary context switches per call, bench/invoke.py at 16
connections), for whichever tenant's worker had just been written to. Every worker
process now runs as ``SCHED_BATCH`` (``sless.sandbox.scheduling``), set from the host
before any of its code runs and inherited by everything it starts: the same CPU share by
weight, but a wakeup never preempts the running task. A tenant may set its own threads
back (the policy is its to lower, not a privilege); that gives it back only what every
worker had before.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


def _policies(pids: set[int]) -> dict[tuple[int, int], int]:
    """Every thread of ``pids``: (pid, tid) → its scheduling policy."""
    found = {}
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                found[(pid, int(tid))] = os.sched_getscheduler(int(tid))
            except ProcessLookupError:
                continue
    return found


async def test_every_process_of_a_worker_runs_as_batch(tmp_path: Path, isolation: str) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    try:
        # a thread started by the tenant's code inherits it too
        inside = await run_probe(
            worker,
            """
            import os, threading
            seen = []
            t = threading.Thread(target=lambda: seen.append(os.sched_getscheduler(0)))
            t.start(); t.join()
            result = [os.sched_getscheduler(0), seen[0]]
            """,
        )
        policies = _policies(worker.pids())
        assert len({pid for pid, _ in policies}) >= 2, policies  # the sandbox and its code
        assert set(policies.values()) == {os.SCHED_BATCH}, policies
        if isolation == "bubblewrap":  # gVisor's kernel reports its own, not the host's
            assert inside["result"] == [os.SCHED_BATCH, os.SCHED_BATCH], inside
    finally:
        await worker.stop()

"""Attack: allocating far more memory than the function's memory_mb, to starve the host.
RLIMIT_AS turns a huge allocation into a MemoryError; touching memory past the cgroup
limit gets the worker OOM-killed. Either way the host and the gateway are fine."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from sless.sandbox import Limits
from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_allocating_ten_times_memory_fails(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path, limits=Limits(memory_mb=64)))
    try:
        data = await run_probe(worker, "block = bytearray(640 * 1024 * 1024)")
        assert data["raised"] == "MemoryError"
        # the worker survives and keeps serving
        assert (await run_probe(worker, "result = 'still here'"))["result"] == "still here"
    finally:
        await worker.stop()


async def test_touching_memory_past_the_cgroup_limit_kills_only_the_worker(
    tmp_path: Path,
) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path, limits=Limits(memory_mb=64)))
    if not worker.cgroup_limited:
        await worker.stop()
        pytest.fail(f"cgroup limits expected on this host: {worker.cgroup_reason}")
    try:
        # under RLIMIT_AS (64 + 136 MiB) but over the 64 MiB cgroup limit
        with pytest.raises(aiohttp.ClientError):
            await run_probe(
                worker,
                "chunks = [bytearray(8 * 1024 * 1024) for _ in range(16)]\n"
                "for c in chunks:\n    c[::4096] = b'x' * len(c[::4096])",
            )
        code = await asyncio.wait_for(worker.wait(), 10)
        assert code != 0
        assert worker.oom_killed()
    finally:
        await worker.stop()

"""Attack: a handler that never returns keeps its worker (and the tenant's slot) forever.
The gateway's timeout ends in Worker.kill / Worker.stop, and every process is gone."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import pytest

from tests.integration.sandbox.harness import alive, launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_sleeping_forever_handler_is_killed(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    pids = worker.pids()
    with pytest.raises(asyncio.TimeoutError):
        await run_probe(worker, "import time\ntime.sleep(3600)", timeout_s=0.5)
    started = time.monotonic()
    worker.kill()
    code = await asyncio.wait_for(worker.wait(), 5)
    assert code == -9
    assert time.monotonic() - started < 2
    await worker.stop()  # idempotent: cleans the cgroup and the socket
    assert not [pid for pid in pids if alive(pid)]


async def test_stop_during_an_invocation_ends_everything(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    pids = worker.pids()
    in_flight = asyncio.ensure_future(run_probe(worker, "import time\ntime.sleep(3600)"))
    await asyncio.sleep(0.3)
    await worker.stop(grace_s=0.5)
    assert worker.returncode is not None
    assert not [pid for pid in pids if alive(pid)]
    with pytest.raises(aiohttp.ClientError):
        await in_flight

"""Attack: a function kills its own worker (os._exit, a segfault): the crash is
reported with its status, not mistaken for a running worker."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_crashed_worker_reports_its_returncode(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    assert worker.returncode is None
    try:
        with pytest.raises(aiohttp.ClientError):
            await run_probe(worker, "import os\nos._exit(3)")
        assert await asyncio.wait_for(worker.wait(), 5) == 3
        assert worker.returncode == 3
    finally:
        await worker.stop()

"""Stopping the resident semgrep: the process ends and its workspace goes, even when the
stop is cancelled half-way, and the cancellation reaches the caller."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sless.validation.resident import _Server


async def _server(tmp_path: Path) -> _Server:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # stands in for ``semgrep lsp``: a process of its own group that never ends by itself
    process = await asyncio.create_subprocess_exec(
        "sleep",
        "60",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return _Server(process, workspace)


async def test_stop_ends_the_process_and_removes_the_workspace(tmp_path: Path) -> None:
    server = await _server(tmp_path)
    await server.stop()
    assert server.process.returncode is not None
    assert not server.workspace.exists()


async def test_a_cancelled_stop_is_cancelled_and_still_ends_the_process(
    tmp_path: Path,
) -> None:
    server = await _server(tmp_path)
    stop = asyncio.create_task(server.stop())
    await asyncio.sleep(0)  # killed; now waiting for the exit
    assert not stop.done()
    stop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stop
    assert not server.workspace.exists()
    await asyncio.wait_for(server.process.wait(), 5)  # killed: it ends, it is reaped
    assert server.process.returncode is not None

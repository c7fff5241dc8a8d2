"""Attack: another host user reads a function's secrets from the process list (``ps``):
the function's env travels to bubblewrap through a memfd, not its command line."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox

pytestmark = pytest.mark.integration


async def test_function_env_not_in_any_command_line(tmp_path: Path) -> None:
    require_sandbox()
    secret = "db-password-77c3a1"
    worker = await launch(make_spec(tmp_path, env={"DB_PASSWORD": secret}))
    try:
        cmdlines = []
        for pid in worker.pids():
            with contextlib.suppress(OSError):
                cmdlines.append(Path(f"/proc/{pid}/cmdline").read_bytes())
    finally:
        await worker.stop()
    assert len(cmdlines) >= 3
    assert not [c for c in cmdlines if secret.encode() in c]

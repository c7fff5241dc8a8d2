"""``sless trigger``, ``sless job``, ``sless invoke --async`` and ``sless invocation``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.conftest import ECHO, wait_for
from tests.support import deploy

pytestmark = pytest.mark.integration


def test_trigger_job_and_async_commands(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "echo", ECHO)
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    env = {**os.environ, "SLESS_URL": gateway.url, "SLESS_TOKEN": token}
    command = str(Path(sys.executable).parent / "sless")

    def sless(*args: str, code: int = 0) -> str:
        result = subprocess.run(
            [command, *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == code, result.stdout + result.stderr
        return result.stdout + result.stderr

    out = sless("trigger", "put", "daily", "-f", "echo", "-s", "@daily", "-d", '{"a": 1}')
    assert "trigger daily: Active; next tick" in out
    assert "daily" in sless("trigger", "ls")
    assert "schedule" in sless("trigger", "put", "bad", "-f", "echo", "-s", "nope", code=1)
    assert "deleted trigger daily" in sless("trigger", "rm", "daily")

    out = sless("job", "run", "once", "-f", "echo", "-d", '{"n": 7}')
    assert "phase: Succeeded" in out
    assert "run_id: 1" in out
    out = sless("job", "run", "once")
    assert "run_id: 2" in out
    assert "trigger job:once" in sless("job", "status", "once", "--logs")
    assert "deleted job once" in sless("job", "rm", "once")

    out = sless("invoke", "echo", "--async", "--data", '{"later": true}')
    invocation_id = json.loads(out)["invocation_id"]

    def finished() -> dict[str, object] | None:
        data: dict[str, object] = json.loads(sless("invocation", invocation_id))
        return data if data.get("state") == "succeeded" else None

    data = wait_for(finished, "the async call")
    assert data["result"]["body"] == {"later": True}  # type: ignore[index]

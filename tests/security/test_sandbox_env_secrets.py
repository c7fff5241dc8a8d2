"""Attack: reading the gateway's secrets from the environment (admin token, cloud keys),
inside the sandbox or from the host's process list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration

ADMIN_TOKEN = "fake-admin-token-5e1f"
AWS_SECRET = "fake-aws-secret-0a9b"


async def test_env_has_no_host_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_sandbox()
    monkeypatch.setenv("SLESS_ADMIN_TOKEN", ADMIN_TOKEN)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    worker = await launch(make_spec(tmp_path, env={"FUNCTION_SETTING": "visible"}))
    try:
        data = await run_probe(
            worker,
            """
            import os
            environs = []
            for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
                try:
                    with open(f"/proc/{pid}/environ", "rb") as f:
                        environs.append(f.read().decode(errors="replace"))
                except OSError:
                    pass
            result = {"env": dict(os.environ), "environs": environs}
            """,
        )
    finally:
        await worker.stop()
    env = data["result"]["env"]
    assert env["FUNCTION_SETTING"] == "visible"
    assert "SLESS_ADMIN_TOKEN" not in env
    assert "AWS_SECRET_ACCESS_KEY" not in env
    everything = repr(data["result"])
    assert ADMIN_TOKEN not in everything
    assert AWS_SECRET not in everything

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
from tests.integration.events.conftest import ECHO, FAILING, wait_for
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


def test_invoke_async_retries(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "fails", FAILING)
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    env = {**os.environ, "SLESS_URL": gateway.url, "SLESS_TOKEN": token}
    command = str(Path(sys.executable).parent / "sless")

    def sless(*args: str, code: int = 0) -> str:
        result = subprocess.run(
            [command, *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == code, result.stdout + result.stderr
        return result.stdout + result.stderr

    out = sless("invoke", "fails", "--async", "--wait", "--retries", "0", code=1)
    assert "dead" in out
    invocation_id = out.split("queued ", 1)[1].split()[0]
    data = json.loads(sless("invocation", invocation_id))
    assert (data["attempts"], data["max_attempts"]) == (1, 1)
    # the default: the platform's setting (3 in these tests)
    out = sless("invoke", "fails", "--async", "--wait", code=1)
    invocation_id = out.split("queued ", 1)[1].split()[0]
    assert json.loads(sless("invocation", invocation_id))["attempts"] == 3
    assert "--retries is for --async" in sless("invoke", "fails", "--retries", "1", code=2)
    assert "-1" in sless("invoke", "fails", "--async", "--retries", "-1", code=2)


def test_secret_and_rabbitmq_trigger_commands(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "echo", ECHO)
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    env = {**os.environ, "SLESS_URL": gateway.url, "SLESS_TOKEN": token}
    command = str(Path(sys.executable).parent / "sless")
    broker = "amqp://user:cli-secret-pw@127.0.0.1:5672/"

    def sless(*args: str, code: int = 0, stdin: str | None = None) -> str:
        result = subprocess.run(
            [command, *args], env=env, capture_output=True, text=True, timeout=120, input=stdin
        )
        assert result.returncode == code, result.stdout + result.stderr
        return result.stdout + result.stderr

    assert "secret broker stored" in sless("secret", "put", "broker", "--from-stdin", stdin=broker)
    listed = sless("secret", "ls")
    assert "broker" in listed
    assert "cli-secret-pw" not in listed
    out = sless(
        "trigger", "put", "orders", "--type", "rabbitmq", "-f", "echo",
        "--url-secret", "broker", "--queue", "orders", "--max-attempts", "3", "--disabled",
    )  # fmt: skip
    assert "trigger orders" in out
    spec = acme.get("/v1/namespaces/sless-acme/triggers/orders").json()["spec"]
    assert spec["type"] == "rabbitmq"
    assert (spec["queue"], spec["url_secret"], spec["max_attempts"]) == ("orders", "broker", 3)
    assert spec["enabled"] is False
    assert "cli-secret-pw" not in json.dumps(spec)
    # a missing secret is a clear error
    out = sless(
        "trigger", "put", "other", "--type", "rabbitmq", "-f", "echo",
        "--url-secret", "nope", "--queue", "q", code=1,
    )  # fmt: skip
    assert "secret 'nope' not found" in out
    assert "deleted trigger orders" in sless("trigger", "rm", "orders")
    assert "secret broker deleted" in sless("secret", "rm", "broker")
    assert "no secrets" in sless("secret", "ls")

"""Held code must never run: a tenant whose upload the static rules hold for review tries
every path that could make it serve (issue 26, defect 1).

The attack used to work: a spec ``PUT`` (even the same spec) or a second ``sless deploy``
put the function back to Pending, and the reconciler built and served the held code while
``sless versions`` still said ``held``. Every assertion here is about what ``/fn`` answers
(the body), not only a status code. The gateway, PostgreSQL, semgrep, the sandbox and the
RabbitMQ broker are real; the held upload is held by our own static rule
(``py-dynamic-exec``: ``eval`` in the handler), no model involved.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from sless.config import Settings
from sless.gateway import create_app
from tests.conftest import RunningGateway, free_port
from tests.integration.events.broker import Broker, queue, rabbitmq
from tests.support import deploy, make_zip, serve_in_thread, wait_for, wait_phase

pytestmark = pytest.mark.integration

__all__ = ["queue", "rabbitmq"]  # fixtures

NS = "sless-acme"
FN = f"/v1/namespaces/{NS}/functions"
#: held by the static rules (eval: code static analysis cannot see), yet a working handler
HELD = {"handler.py": "def handle(event, context):\n    return eval(\"'held-' + 'code'\")\n"}
ALLOWED = {"handler.py": "def handle(event, context):\n    return 'v1-code'\n"}
SETTLED = {"Validating", "Rejected", "Ready", "Failed"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    events = settings.events
    events.allow_seconds_field = True
    events.scheduler_interval_s = 0.5
    events.poll_interval_s = 0.2
    events.retry_base_s = 0.2
    events.retry_max_s = 1.0
    events.max_attempts = 2
    return settings


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def upload_held(acme: httpx.Client, name: str) -> dict[str, Any]:
    response = acme.post(f"{FN}/{name}/upload", content=make_zip(HELD))
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    assert body["verdict"] == "review", body
    return body


def settle(acme: httpx.Client, name: str) -> dict[str, Any]:
    """The function once the reconciler has acted on the last write."""
    return wait_phase(acme, f"{FN}/{name}", SETTLED)


def fn(gateway: RunningGateway, name: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{gateway.url}/fn/{NS}/{name}", timeout=60, **kwargs)


def states(acme: httpx.Client, name: str) -> dict[str, str]:
    versions = acme.get(f"{FN}/{name}/versions").json()["versions"]
    return {v["version"]: v["state"] for v in versions}


def pending_reviews(gateway: RunningGateway) -> list[dict[str, Any]]:
    reviews: list[dict[str, Any]] = gateway.admin.get("/v1/admin/reviews").json()["reviews"]
    return reviews


def assert_never_held(response: httpx.Response) -> None:
    assert "held-code" not in response.text, response.text


def test_a_spec_put_or_a_second_deploy_never_runs_held_code(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert acme.put(f"{FN}/only", json={}).status_code == 201
    held = upload_held(acme, "only")
    assert held["phase"] == "Validating"

    # the same spec again (what a second `sless deploy` sends first), then a changed one
    for spec in ({}, {}, {"env": {"A": "1"}}, {"memory_mb": 256}):
        put = acme.put(f"{FN}/only", json=spec)
        assert put.status_code == 200, put.text
        function = settle(acme, "only")
        assert function["status"]["phase"] == "Validating", function["status"]
        assert "review" in function["status"]["message"]
        answer = fn(gateway, "only")
        assert answer.status_code == 503, answer.text
        assert_never_held(answer)
    # the same code uploaded again is still held, and a new version of it too
    again = acme.post(f"{FN}/only/upload", content=make_zip(HELD))
    assert again.status_code == 202, again.text
    assert settle(acme, "only")["status"]["phase"] == "Validating"
    assert_never_held(fn(gateway, "only"))
    assert set(states(acme, "only").values()) == {"held"}
    # every version made from the held code is held, and it is still in the queue
    assert [r["function"] for r in pending_reviews(gateway)] == ["only"]
    for version in states(acme, "only"):
        direct = fn(gateway, f"only@{version}")
        assert direct.status_code in (404, 503), direct.text
        assert_never_held(direct)


def test_v1_keeps_serving_while_v2_is_held_whatever_the_tenant_writes(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert deploy(acme, NS, "fn", ALLOWED)["status"]["phase"] == "Ready"
    assert fn(gateway, "fn").json() == "v1-code"
    held = upload_held(acme, "fn")
    assert held["version"] == "v2"

    for spec in ({}, {"env": {"B": "2"}}, {"timeout_s": 20}):
        assert acme.put(f"{FN}/fn", json=spec).status_code == 200
        function = settle(acme, "fn")
        assert function["status"]["phase"] == "Validating", function["status"]
        assert function["status"]["version"] == "v1"
        for _ in range(5):
            assert fn(gateway, "fn").json() == "v1-code"
    versions = states(acme, "fn")
    assert versions["v1"] == "allowed"
    assert {state for v, state in versions.items() if v != "v1"} == {"held"}

    for version in [v for v in versions if v != "v1"]:
        direct = fn(gateway, f"fn@{version}")
        assert direct.status_code in (404, 503), direct.text
        assert_never_held(direct)
        split = {"traffic": [{"version": "v1", "percent": 50}, {"version": version, "percent": 50}]}
        refused = acme.put(f"{FN}/fn", json=split)
        assert refused.status_code == 422, refused.text
        assert "held" in refused.text
        rollback = acme.post(f"{FN}/fn/rollback", json={"version": version})
        assert rollback.status_code == 422, rollback.text
        # an asynchronous call of the held version never runs it
        queued = fn(gateway, f"fn@{version}", headers={"X-Sless-Async": "true"})
        if queued.status_code == 202:
            path = f"/v1/namespaces/{NS}/invocations/{queued.json()['invocation_id']}"
            done = wait_for(
                "the queued call ended",
                lambda p=path: acme.get(p).json().get("state") in ("succeeded", "failed", "dead"),
                60,
            )
            assert done
            assert "held-code" not in acme.get(path).text
        else:
            assert queued.status_code in (404, 422, 503), queued.text
    assert_never_held(fn(gateway, "fn", headers={"X-Sless-Async": "true"}))

    # a canary upload of held code gets no share of the calls either
    canary = acme.post(f"{FN}/fn/upload", params={"traffic": 50}, content=make_zip(HELD))
    assert canary.status_code == 202, canary.text
    assert settle(acme, "fn")["status"]["phase"] == "Validating"
    assert acme.put(f"{FN}/fn", json={}).status_code == 200
    assert settle(acme, "fn")["status"]["phase"] == "Validating"
    for _ in range(10):
        assert fn(gateway, "fn").json() == "v1-code"


def test_events_never_call_held_code(
    gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker, queue: str
) -> None:
    """Cron, jobs, async calls and RabbitMQ messages of a function whose only code is held
    (after the PUT that used to release it) never run it."""
    assert acme.put(f"{FN}/ev", json={}).status_code == 201
    upload_held(acme, "ev")
    assert acme.put(f"{FN}/ev", json={}).status_code == 200
    assert settle(acme, "ev")["status"]["phase"] == "Validating"
    ns = f"/v1/namespaces/{NS}"
    cron = {"type": "cron", "function": "ev", "schedule": "* * * * * *", "payload": {"k": 1}}
    assert acme.put(f"{ns}/triggers/tick", json=cron).status_code == 201
    assert acme.put(f"{ns}/jobs/once", json={"function": "ev", "run_id": 1}).status_code in (
        200,
        201,
    )
    queued = fn(gateway, "ev", headers={"X-Sless-Async": "true"})
    assert queued.status_code in (202, 503), queued.text
    assert acme.put(f"{ns}/secrets/broker", json={"value": rabbitmq.url}).status_code == 201
    rabbitmq.declare(queue)
    consume = {"type": "rabbitmq", "function": "ev", "url_secret": "broker", "queue": queue}
    assert acme.put(f"{ns}/triggers/consume", json=consume).status_code == 201
    rabbitmq.publish(queue, [("m1", b'{"n": 1}')])

    def calls() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = acme.get(
            f"{ns}/invocations", params={"function": "ev", "limit": 1000}
        ).json()["invocations"]
        return rows

    def each_source_tried() -> bool:
        triggers = {str(row.get("trigger")) for row in calls()}
        return any("tick" in t for t in triggers) and any("consume" in t for t in triggers)

    assert wait_for("cron and RabbitMQ tried to call the function", each_source_tried, 60)
    # the job runner looked at the function and waits for code that may serve
    job = wait_for(
        "the job runner decided",
        lambda: acme.get(f"{ns}/jobs/once").json()["status"]["phase"] != "Pending",
        60,
    )
    assert job
    assert acme.get(f"{ns}/jobs/once").json()["status"]["phase"] == "Waiting"
    for row in calls():
        assert row["status"] >= 500, row
        assert "held-code" not in str(row)
    assert "held-code" not in acme.get(f"{ns}/jobs/once").text


def test_approval_releases_and_rejection_never_runs(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    for name in ("good", "bad"):
        assert acme.put(f"{FN}/{name}", json={}).status_code == 201
        review = upload_held(acme, name)["review_id"]
        assert acme.put(f"{FN}/{name}", json={"env": {"X": "1"}}).status_code == 200
        assert settle(acme, name)["status"]["phase"] == "Validating"
        decision = "approve" if name == "good" else "reject"
        answer = gateway.admin.post(f"/v1/admin/reviews/{review}/{decision}", json={"reason": "r"})
        assert answer.status_code == 200, answer.text

    # approved: every version of that code may serve, and the current one does
    assert wait_phase(acme, f"{FN}/good", {"Ready", "Failed"})["status"]["phase"] == "Ready"
    assert fn(gateway, "good").json() == "held-code"
    assert set(states(acme, "good").values()) == {"allowed"}

    # rejected: no write ever makes it run
    assert settle(acme, "bad")["status"]["phase"] == "Rejected"
    for spec in ({}, {"env": {"X": "1"}}, {"env": {"Y": "2"}}):
        assert acme.put(f"{FN}/bad", json=spec).status_code == 200
        function = settle(acme, "bad")
        assert function["status"]["phase"] == "Rejected", function["status"]
        answer = fn(gateway, "bad")
        assert answer.status_code == 503
        assert_never_held(answer)
    assert set(states(acme, "bad").values()) == {"rejected"}
    for version in states(acme, "bad"):
        assert acme.post(f"{FN}/bad/rollback", json={"version": version}).status_code == 422
        assert_never_held(fn(gateway, f"bad@{version}"))


def test_the_reconciler_never_builds_held_code_even_when_asked_directly(
    gateway: RunningGateway, acme: httpx.Client, database_url: str
) -> None:
    """A row that says Pending for held code, and even names it as the serving spec (what
    the old release-by-PUT left behind): neither the running reconciler nor a restarted
    gateway builds or starts it."""
    assert acme.put(f"{FN}/stale", json={}).status_code == 201
    upload_held(acme, "stale")
    asyncio.run(_forge_row(database_url))
    # the gateway's reconciler wakes on the NOTIFY of that write
    function = settle(acme, "stale")
    assert function["status"]["phase"] == "Validating", function["status"]
    answer = fn(gateway, "stale")
    assert answer.status_code == 503, answer.text
    assert_never_held(answer)

    # a restart of the reconciler: a second gateway process on the same database
    settings = gateway.settings.model_copy(deep=True)
    settings.gateway.port = free_port()
    settings.data_dir = gateway.settings.data_dir.parent / "restarted"
    settings.data_dir.mkdir()
    asyncio.run(_forge_row(database_url))
    with serve_in_thread(create_app(settings, database_url), settings.gateway.port) as served:
        restarted = settle(acme, "stale")
        assert restarted["status"]["phase"] == "Validating", restarted["status"]
        second = httpx.get(f"{served.url}/fn/{NS}/stale", timeout=60)
        assert second.status_code == 503, second.text
        assert_never_held(second)
    assert_never_held(fn(gateway, "stale"))


async def _forge_row(database_url: str) -> None:
    """Phase Pending and the held spec as the serving one, straight in the table."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "UPDATE functions SET phase = 'Pending', message = '', serving_spec = spec,"
            " generation = generation + 1 WHERE namespace = $1 AND name = 'stale'",
            NS,
        )
        payload = json.dumps({"namespace": NS, "name": "stale"})
        await conn.execute("SELECT pg_notify('sless_functions', $1)", payload)
    finally:
        await conn.close()


def test_sless_deploy_exits_non_zero_when_held_or_rejected(
    gateway: RunningGateway, acme: httpx.Client, tmp_path: Path
) -> None:
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    env = {**os.environ, "SLESS_URL": gateway.url, "SLESS_TOKEN": token}
    command = str(Path(sys.executable).parent / "sless")
    held_dir = tmp_path / "held"
    held_dir.mkdir()
    (held_dir / "handler.py").write_text(HELD["handler.py"])

    def sless_deploy(directory: Path, name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [command, "deploy", str(directory), "-n", name, "--wait-timeout", "120"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    first = sless_deploy(held_dir, "cli")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "held for review" in first.stdout + first.stderr
    # the same deploy again: still held, still not serving, still exit 3
    second = sless_deploy(held_dir, "cli")
    assert second.returncode == 3, second.stdout + second.stderr
    assert_never_held(fn(gateway, "cli"))
    [review] = [r for r in pending_reviews(gateway) if r["function"] == "cli"]
    gateway.admin.post(f"/v1/admin/reviews/{review['id']}/reject", json={"reason": "no"})
    third = sless_deploy(held_dir, "cli")
    assert third.returncode == 4, third.stdout + third.stderr
    assert "Rejected" in third.stdout + third.stderr
    assert_never_held(fn(gateway, "cli"))
    help_text = subprocess.run(
        [command, "deploy", "--help"], env=env, capture_output=True, text=True, timeout=60
    ).stdout
    assert "3  the code is held for the provider" in help_text

"""Cron triggers in embedded mode: every tick recorded with the trigger's name, at most
once with several gateways on one database, no replay beyond the catch-up window,
pre-warming before the tick, and the API's answers to bad input."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.conftest import ECHO, GatewayStarter, invocations, sql, wait_for
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"
EVERY_SECOND = "* * * * * *"


def _trigger_path(name: str) -> str:
    return f"/v1/namespaces/{NS}/triggers/{name}"


def _ticks(client: httpx.Client, trigger: str) -> list[dict[str, Any]]:
    return [r for r in invocations(client, NS, "echo") if r["trigger"] == trigger]


def _platform(gateway: RunningGateway) -> Any:
    return gateway.app.api.state.platform  # type: ignore[attr-defined]


def test_ticks_are_recorded_with_the_trigger_name_and_disabling_stops_them(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "echo", ECHO)
    body = {"type": "cron", "function": "echo", "schedule": EVERY_SECOND, "payload": {"k": 1}}
    created = acme.put(_trigger_path("every-second"), json=body)
    assert created.status_code == 201, created.text
    assert created.json()["status"]["phase"] == "Active"
    assert created.json()["status"]["next_tick"]

    rows = wait_for(
        lambda: len(_ticks(acme, "every-second")) >= 3 and _ticks(acme, "every-second"),
        "three ticks",
    )
    assert all(r["status"] == 200 for r in rows)
    assert acme.get(_trigger_path("every-second")).json()["status"]["last_tick"]
    logs = acme.get(f"/v1/namespaces/{NS}/functions/echo/logs").text
    assert "trigger every-second" in logs

    disabled = acme.put(_trigger_path("every-second"), json={**body, "enabled": False})
    assert disabled.status_code == 200
    assert disabled.json()["status"]["phase"] == "Suspended"
    time.sleep(2)  # ticks claimed before the change may still land
    settled = len(_ticks(acme, "every-second"))
    time.sleep(3)
    assert len(_ticks(acme, "every-second")) == settled

    listed = acme.get(f"/v1/namespaces/{NS}/triggers").json()
    assert [t["name"] for t in listed["triggers"]] == ["every-second"]
    assert acme.delete(_trigger_path("every-second")).status_code == 200
    assert acme.get(_trigger_path("every-second")).status_code == 404


def test_two_gateways_fire_each_tick_once(
    gateway: RunningGateway, acme: httpx.Client, gateways: GatewayStarter
) -> None:
    deploy(acme, NS, "echo", ECHO)
    second = gateways.start(data_dir=gateway.settings.data_dir)
    other = second.client(acme.headers["Authorization"].removeprefix("Bearer "))
    wait_for(
        lambda: (
            other.get(f"/v1/namespaces/{NS}/functions/echo").json()["status"]["phase"] == "Ready"
        ),
        "the function on the second gateway",
    )
    body = {"type": "cron", "function": "echo", "schedule": EVERY_SECOND}
    assert acme.put(_trigger_path("shared"), json=body).status_code == 201
    wait_for(lambda: len(_ticks(acme, "shared")) >= 8, "eight ticks")
    acme.put(_trigger_path("shared"), json={**body, "enabled": False})
    time.sleep(2)

    # both gateways append to the same function log: every tick must appear once
    logs = acme.get(f"/v1/namespaces/{NS}/functions/echo/logs").text
    # "[<invocation id>] tick <tick> trigger shared age ..."
    ticks = [
        line.split(" trigger shared ")[0].split()[-1]
        for line in logs.splitlines()
        if " trigger shared " in line
    ]
    assert len(ticks) >= 8
    assert len(ticks) == len(set(ticks)), "a tick fired twice"
    records = _ticks(acme, "shared")
    assert len(records) == len(ticks)
    fired = [_platform(g).events.scheduler.fired for g in (gateway, second)]
    assert sum(fired) == len(ticks)


def test_missed_ticks_beyond_the_window_are_not_replayed(
    gateways: GatewayStarter, database_url: str
) -> None:
    gateway = gateways.start(catchup_window_s=3.0)
    acme = gateway.tenant("acme")
    deploy(acme, NS, "echo", ECHO)
    body = {"type": "cron", "function": "echo", "schedule": EVERY_SECOND, "enabled": False}
    assert acme.put(_trigger_path("late"), json=body).status_code == 201
    # as if the trigger was enabled an hour ago and no gateway ran since
    [row] = sql(
        database_url,
        "UPDATE triggers SET spec = jsonb_set(spec, '{enabled}', 'true'),"
        " updated_at = now() - interval '1 hour' WHERE name = 'late' RETURNING now() AS at",
    )
    enabled_at: datetime = row["at"]
    wait_for(lambda: len(_ticks(acme, "late")) >= 2, "ticks")
    [first] = sql(
        database_url, "SELECT min(tick) AS tick FROM trigger_ticks WHERE trigger = 'late'"
    )
    assert first["tick"] >= enabled_at - timedelta(seconds=3 + 1)


def test_prewarm_starts_a_worker_before_the_tick(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "echo", ECHO)
    pool = _platform(gateway).backend.pool(NS, "echo")
    assert pool is not None
    assert pool.size == 0
    tick = (datetime.now(UTC) + timedelta(seconds=9)).replace(microsecond=0)
    body = {
        "type": "cron",
        "function": "echo",
        "schedule": f"{tick.minute} {tick.hour} * * * {tick.second}",
        "prewarm_s": 5,
    }
    assert acme.put(_trigger_path("warm"), json=body).status_code == 201
    wait_for(lambda: pool.size >= 1, "the pre-warmed worker", timeout=15)
    assert datetime.now(UTC) < tick
    assert _ticks(acme, "warm") == []
    wait_for(lambda: _ticks(acme, "warm"), "the tick", timeout=30)
    logs = acme.get(f"/v1/namespaces/{NS}/functions/echo/logs").text
    [line] = [line for line in logs.splitlines() if " trigger warm " in line]
    age = float(line.split()[-1])
    assert age > 2.0, f"the worker was started {age} s before the call: not pre-warmed"
    assert pool.started == 1


def test_bad_triggers_are_refused_with_a_clear_4xx(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "echo", ECHO)
    cases = [
        ({"type": "cron", "function": "echo", "schedule": "61 * * * *"}, "schedule"),
        ({"type": "cron", "function": "echo", "schedule": "0 0 31 2 *"}, "schedule"),
        ({"type": "cron", "function": "echo", "schedule": "not a cron"}, "schedule"),
        ({"type": "cron", "function": "echo"}, "needs a schedule"),
        (
            {"type": "cron", "function": "echo", "schedule": "@daily", "timezone": "Mars/Base"},
            "timezone",
        ),
        (
            {"type": "cron", "function": "echo", "schedule": "@daily", "timezone": "../etc"},
            "timezone",
        ),
        ({"type": "cron", "function": "nope", "schedule": "@daily"}, "function 'nope' not found"),
        ({"type": "cron", "function": "echo", "schedule": "@daily", "prewarm_s": -1}, "prewarm"),
        ({"type": "smtp", "function": "echo"}, "type"),
        ({"type": "rabbitmq", "function": "echo", "queue": "q"}, "rabbitmq"),
    ]
    for body, needle in cases:
        response = acme.put(_trigger_path("bad"), json=body)
        assert response.status_code == 422, (body, response.text)
        assert needle in response.json()["error"]["message"], (body, response.text)
    assert acme.get(_trigger_path("bad")).status_code == 404
    berlin = {
        "type": "cron",
        "function": "echo",
        "schedule": "0 9 * * 1",
        "timezone": "Europe/Berlin",
    }
    response = acme.put(_trigger_path("berlin"), json=berlin)
    assert response.status_code == 201, response.text
    assert response.json()["status"]["next_tick"].endswith("+00:00") is False
    http = acme.put(_trigger_path("web"), json={"type": "http", "function": "echo"})
    assert http.status_code == 201


def test_another_tenant_gets_404_on_triggers(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "echo", ECHO)
    body = {"type": "cron", "function": "echo", "schedule": "@daily"}
    assert acme.put(_trigger_path("mine"), json=body).status_code == 201
    other = gateway.tenant("other")
    assert other.get(_trigger_path("mine")).status_code == 404
    assert other.put(_trigger_path("mine"), json=body).status_code == 404
    assert other.delete(_trigger_path("mine")).status_code == 404
    assert other.get(f"/v1/namespaces/{NS}/triggers").status_code == 404
    assert other.get("/v1/namespaces/sless-other/triggers/mine").status_code == 404
    # a trigger cannot name another tenant's function either
    theirs = other.put(
        "/v1/namespaces/sless-other/triggers/steal",
        json={"type": "cron", "function": "echo", "schedule": "@daily"},
    )
    assert theirs.status_code == 422
    assert acme.get(_trigger_path("mine")).status_code == 200

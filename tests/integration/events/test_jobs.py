"""Jobs: run_id 0 runs nothing, a higher run_id runs exactly once, the same run_id never
runs twice (across a restart on the same database), a lower one is refused."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.conftest import ECHO, GatewayStarter, invocations, wait_for
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"
JOB = f"/v1/namespaces/{NS}/jobs/nightly"


def _job_runs(client: httpx.Client) -> list[dict[str, Any]]:
    return [r for r in invocations(client, NS, "echo") if r["trigger"] == "job:nightly"]


def _finished(client: httpx.Client, run_id: int) -> dict[str, Any] | None:
    job: dict[str, Any] = client.get(JOB).json()
    status = job["status"]
    if status["run_id"] == run_id and status["phase"] in ("Succeeded", "Failed"):
        return job
    return None


def test_run_ids_run_exactly_once(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "echo", ECHO)
    created = acme.put(JOB, json={"function": "echo", "run_id": 0, "payload": {"n": 0}})
    assert created.status_code == 201, created.text
    assert created.json()["status"]["phase"] == "Idle"

    response = acme.put(JOB, json={"function": "echo", "run_id": 1, "payload": {"n": 1}})
    assert response.status_code == 200
    job = wait_for(lambda: _finished(acme, 1), "run 1", show=lambda: acme.get(JOB).json())
    status = job["status"]
    assert status["phase"] == "Succeeded", status
    result = json.loads(status["result"])
    assert result["body"] == {"n": 1}
    assert result["run_id"] == "1"
    assert result["trigger"] == "job:nightly"
    assert status["started_at"]
    assert status["completed_at"]
    wait_for(lambda: len(_job_runs(acme)) == 1, "the run's invocation record")
    record = acme.get(f"/v1/namespaces/{NS}/invocations/{status['invocation_id']}").json()
    assert record["trigger"] == "job:nightly"

    # the same run id again: nothing runs
    assert acme.put(JOB, json={"function": "echo", "run_id": 1}).status_code == 200
    # a lower one is refused: runs only move forward
    lower = acme.put(JOB, json={"function": "echo", "run_id": 0})
    assert lower.status_code == 409
    assert "only move forward" in lower.json()["error"]["message"]

    acme.put(JOB, json={"function": "echo", "run_id": 5, "payload": {"n": 5}})
    job = wait_for(lambda: _finished(acme, 5), "run 5")
    assert json.loads(job["status"]["result"])["body"] == {"n": 5}
    wait_for(lambda: len(_job_runs(acme)) == 2, "the second run's record")
    assert "tick None trigger job:nightly" in acme.get(JOB + "/logs").text
    listed = acme.get(f"/v1/namespaces/{NS}/jobs").json()
    assert [j["name"] for j in listed["jobs"]] == ["nightly"]
    assert acme.delete(JOB).status_code == 200
    assert acme.get(JOB).status_code == 404


def test_a_run_id_never_runs_twice_across_a_restart(
    gateways: GatewayStarter, database_url: str
) -> None:
    first = gateways.start()
    acme = first.tenant("acme")
    deploy(acme, NS, "echo", ECHO)
    acme.put(JOB, json={"function": "echo", "run_id": 3})
    wait_for(lambda: _finished(acme, 3), "run 3")
    wait_for(lambda: len(_job_runs(acme)) == 1, "the record")
    token = acme.headers["Authorization"]
    gateways.stop(first)

    second = gateways.start(data_dir=first.settings.data_dir)
    again = second.client(token.removeprefix("Bearer "))
    wait_for(
        lambda: (
            again.get(f"/v1/namespaces/{NS}/functions/echo").json()["status"]["phase"] == "Ready"
        ),
        "the function on the new gateway",
    )
    assert again.put(JOB, json={"function": "echo", "run_id": 3}).status_code == 200
    # give the new gateway's runner many passes: run 3 must not start again
    time.sleep(10 * second.settings.events.poll_interval_s)
    assert again.get(JOB).json()["status"]["phase"] == "Succeeded"
    assert len(_job_runs(again)) == 1
    again.put(JOB, json={"function": "echo", "run_id": 4})
    wait_for(lambda: _finished(again, 4), "run 4 on the new gateway")
    wait_for(lambda: len(_job_runs(again)) == 2, "run 4's record")


def test_job_errors_are_clear(gateway: RunningGateway, acme: httpx.Client) -> None:
    missing = acme.put(JOB, json={"function": "nope", "run_id": 1})
    assert missing.status_code == 422
    assert "function 'nope' not found" in missing.json()["error"]["message"]
    assert acme.put(JOB, json={"function": "echo", "run_id": -1}).status_code == 422
    assert acme.put(JOB, json={"function": "echo", "bogus": 1}).status_code == 422
    assert acme.put(f"/v1/namespaces/{NS}/jobs/Bad_Name", json={}).status_code == 422


def test_another_tenant_gets_404_on_jobs(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "echo", ECHO)
    assert acme.put(JOB, json={"function": "echo"}).status_code == 201
    other = gateway.tenant("other")
    assert other.get(JOB).status_code == 404
    assert other.put(JOB, json={"function": "echo", "run_id": 9}).status_code == 404
    assert other.delete(JOB).status_code == 404
    assert other.get(f"/v1/namespaces/{NS}/jobs").status_code == 404
    assert other.get("/v1/namespaces/sless-other/jobs/nightly").status_code == 404
    assert acme.get(JOB).json()["spec"]["run_id"] == 0

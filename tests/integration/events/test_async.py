"""Asynchronous invocation: 202 at once, then the result from the durable queue; retries
with backoff and a dead-letter state for a failing function."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.conftest import ECHO, FAILING, invocations, sql, wait_for
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"


def _status(client: httpx.Client, invocation_id: str) -> dict[str, object]:
    response = client.get(f"/v1/namespaces/{NS}/invocations/{invocation_id}")
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def test_async_call_answers_202_then_the_result_is_readable(
    gateway: RunningGateway, acme: httpx.Client, database_url: str
) -> None:
    deploy(acme, NS, "echo", ECHO)
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/echo",
        json={"n": 1},
        headers={"X-Sless-Async": "true", "Authorization": "Bearer not-forwarded"},
    )
    assert response.status_code == 202, response.text
    invocation_id = response.json()["invocation_id"]
    assert response.headers["x-sless-invocation-id"] == invocation_id

    done = wait_for(
        lambda: (s := _status(acme, invocation_id))["state"] == "succeeded" and s,
        "the queued call to finish",
        show=lambda: _status(acme, invocation_id),
    )
    assert done["status"] == 200
    assert done["attempts"] == 1
    assert done["trigger"] == "async"
    result = done["result"]
    assert isinstance(result, dict)
    assert result["body"] == {"n": 1}
    assert result["invocation_id"] == invocation_id
    # the caller's credentials are never stored with a queued call
    stored = sql(database_url, "SELECT headers FROM invocation_queue")
    assert "not-forwarded" not in str(stored)
    assert "authorization" not in str(stored).lower()
    # one invocation record, written when the call ended, under the same id
    rows = wait_for(
        lambda: [r for r in invocations(acme, NS, "echo") if r["id"] == invocation_id],
        "the invocation record",
    )
    assert len(rows) == 1
    assert rows[0]["trigger"] == "async"


def test_prefer_respond_async_is_queued_too(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "echo", ECHO)
    response = httpx.get(
        f"{gateway.url}/fn/{NS}/echo?x=1", headers={"Prefer": "respond-async, wait=10"}
    )
    assert response.status_code == 202
    invocation_id = response.json()["invocation_id"]
    done = wait_for(
        lambda: (s := _status(acme, invocation_id))["state"] == "succeeded" and s, "the call"
    )
    assert done["status"] == 200


def test_failing_call_is_retried_then_dead_lettered(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "fails", FAILING)
    response = httpx.post(f"{gateway.url}/fn/{NS}/fails", headers={"X-Sless-Async": "true"})
    assert response.status_code == 202
    invocation_id = response.json()["invocation_id"]
    dead = wait_for(
        lambda: (s := _status(acme, invocation_id))["state"] == "dead" and s, "the dead letter"
    )
    assert dead["attempts"] == gateway.settings.events.max_attempts == 3
    assert isinstance(dead["status"], int)
    assert dead["status"] >= 500
    logs = acme.get(f"/v1/namespaces/{NS}/functions/fails/logs").text
    assert logs.count(f"failing attempt {invocation_id}") == 3
    rows = wait_for(
        lambda: [r for r in invocations(acme, NS, "fails") if r["id"] == invocation_id],
        "the invocation record",
    )
    assert len(rows) == 1


def test_another_tenant_cannot_see_an_invocation(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "echo", ECHO)
    response = httpx.post(f"{gateway.url}/fn/{NS}/echo", headers={"X-Sless-Async": "true"})
    invocation_id = response.json()["invocation_id"]
    wait_for(lambda: _status(acme, invocation_id)["state"] == "succeeded", "the call")
    other = gateway.tenant("other")
    assert other.get(f"/v1/namespaces/{NS}/invocations/{invocation_id}").status_code == 404
    mine = other.get(f"/v1/namespaces/sless-other/invocations/{invocation_id}")
    assert mine.status_code == 404
    assert acme.get(f"/v1/namespaces/{NS}/invocations/not-a-uuid").status_code == 404


def test_async_call_of_an_unknown_function_is_404(gateway: RunningGateway) -> None:
    response = httpx.post(f"{gateway.url}/fn/{NS}/nope", headers={"X-Sless-Async": "true"})
    assert response.status_code == 404

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
HEADERS = {
    "handler.py": (
        "def handle(event, context):\n"
        "    return {'headers': {k.lower(): v for k, v in event['headers'].items()}}\n"
    )
}


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


def test_a_caller_may_ask_for_fewer_retries(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, NS, "fails", FAILING)
    url = f"{gateway.url}/fn/{NS}/fails"
    asked = {}
    for retries in ("0", "1", "50"):
        response = httpx.post(url, headers={"X-Sless-Async": "true", "X-Sless-Retries": retries})
        assert response.status_code == 202, response.text
        asked[retries] = response.json()["invocation_id"]
    for retries, attempts in (("0", 1), ("1", 2), ("50", 3)):  # 50: capped at the setting
        invocation_id = asked[retries]
        dead = wait_for(
            lambda i=invocation_id: (s := _status(acme, i))["state"] == "dead" and s,
            f"the dead letter of X-Sless-Retries: {retries}",
        )
        assert (dead["attempts"], dead["max_attempts"]) == (attempts, attempts), dead
    # the function saw each attempt, and never the header (X-Sless-* is the platform's)
    logs = acme.get(f"/v1/namespaces/{NS}/functions/fails/logs").text
    assert logs.count(f"failing attempt {asked['0']}") == 1
    assert logs.count(f"failing attempt {asked['1']}") == 2


@pytest.mark.parametrize("value", ["-1", "x", "1.5", "+2", "1_0", "", "99999"])
def test_a_bad_retries_header_is_refused(
    gateway: RunningGateway, acme: httpx.Client, value: str
) -> None:
    deploy(acme, NS, "echo", ECHO)
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/echo", headers={"X-Sless-Async": "true", "X-Sless-Retries": value}
    )
    assert response.status_code == 400, response.text
    assert "X-Sless-Retries" in response.json()["error"]["message"]


def test_the_retries_header_never_reaches_the_function(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, NS, "headers", HEADERS)
    response = httpx.post(
        f"{gateway.url}/fn/{NS}/headers",
        headers={"X-Sless-Async": "true", "X-Sless-Retries": "2", "X-Visible": "yes"},
    )
    invocation_id = response.json()["invocation_id"]
    done = wait_for(
        lambda: (s := _status(acme, invocation_id))["state"] == "succeeded" and s, "the call"
    )
    seen = done["result"]
    assert isinstance(seen, dict)
    assert seen["headers"]["x-visible"] == "yes"  # the caller's own headers do arrive
    assert "x-sless-retries" not in seen["headers"]


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

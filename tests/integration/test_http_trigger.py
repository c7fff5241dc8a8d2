"""``enabled: false`` on an ``http`` trigger: ``/fn/...`` refuses the function.

A function without any http trigger stays reachable (the default); one whose http
triggers are all disabled answers 403 ``http_trigger_disabled``, for direct and
asynchronous calls; re-enabling or deleting the trigger makes it reachable again, in this
gateway at once and in another gateway on the same database through NOTIFY.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.events.conftest import GatewayStarter
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"
HELLO = {"handler.py": "def handle(event, context):\n    return {'hello': 'world'}\n"}


@pytest.fixture
def gateways(settings: Settings, database_url: str, tmp_path: Path) -> Iterator[GatewayStarter]:
    starter = GatewayStarter(settings, database_url, tmp_path)
    yield starter
    starter.stop_all()


def _trigger(acme: httpx.Client, name: str, *, enabled: bool, function: str = "hello") -> None:
    body = {"type": "http", "function": function, "enabled": enabled}
    response = acme.put(f"/v1/namespaces/{NS}/triggers/{name}", json=body)
    assert response.status_code in (200, 201), response.text


def _assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "http_trigger_disabled"
    assert "http trigger is disabled" in error["message"]


def test_disabled_http_trigger_refuses_calls_until_enabled_or_deleted(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "hello", HELLO)
    url = f"{gateway.url}/fn/{NS}/hello"
    # no http trigger: reachable, as before
    assert httpx.get(url).json() == {"hello": "world"}

    _trigger(acme, "web", enabled=False)
    _assert_refused(httpx.get(url))
    _assert_refused(httpx.post(url + "/sub/path", json={"a": 1}))
    # asynchronous calls are refused too, and nothing is queued
    queued = httpx.post(url, json={"a": 1}, headers={"X-Sless-Async": "true"})
    _assert_refused(queued)
    _assert_refused(httpx.post(url, headers={"Prefer": "respond-async"}))
    refused_id = queued.json()["error"]["invocation_id"]
    status_url = f"/v1/namespaces/{NS}/invocations/{refused_id}"
    deadline = time.monotonic() + 20  # the recorder writes in batches
    while (found := acme.get(status_url)).status_code == 404:
        assert time.monotonic() < deadline, found.text
        time.sleep(0.1)
    status = found.json()
    assert status["status"] == 403
    assert status.get("attempts") is None  # recorded as a refused call, never queued

    # one enabled http trigger among disabled ones makes it reachable
    _trigger(acme, "web-2", enabled=True)
    assert httpx.get(url).json() == {"hello": "world"}
    _trigger(acme, "web-2", enabled=False)
    _assert_refused(httpx.get(url))

    # re-enabled: served, synchronously and asynchronously
    _trigger(acme, "web", enabled=True)
    assert httpx.get(url).json() == {"hello": "world"}
    assert httpx.post(url, headers={"X-Sless-Async": "true"}).status_code == 202

    # disabled again, then every http trigger deleted: back to the default
    _trigger(acme, "web", enabled=False)
    _assert_refused(httpx.get(url))
    assert acme.delete(f"/v1/namespaces/{NS}/triggers/web").status_code == 200
    _assert_refused(httpx.get(url))  # web-2 is still there, disabled
    assert acme.delete(f"/v1/namespaces/{NS}/triggers/web-2").status_code == 200
    assert httpx.get(url).json() == {"hello": "world"}


def test_disabled_trigger_of_another_function_changes_nothing(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "hello", HELLO)
    deploy(acme, NS, "other", HELLO)
    _trigger(acme, "other-web", enabled=False, function="other")
    assert httpx.get(f"{gateway.url}/fn/{NS}/hello").status_code == 200
    _assert_refused(httpx.get(f"{gateway.url}/fn/{NS}/other"))
    # a disabled cron trigger is not an http trigger
    cron = {"type": "cron", "function": "hello", "schedule": "@daily", "enabled": False}
    assert acme.put(f"/v1/namespaces/{NS}/triggers/nightly", json=cron).status_code == 201
    assert httpx.get(f"{gateway.url}/fn/{NS}/hello").status_code == 200


def test_token_function_checks_the_token_before_telling_the_trigger_is_disabled(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "private", HELLO, {"auth": "token"})
    _trigger(acme, "web", enabled=False, function="private")
    anonymous = httpx.get(f"{gateway.url}/fn/{NS}/private")
    assert anonymous.status_code == 401
    assert "disabled" not in anonymous.text
    _assert_refused(acme.get(f"/fn/{NS}/private"))


def test_a_trigger_written_through_one_gateway_applies_in_another(
    gateway: RunningGateway, gateways: GatewayStarter
) -> None:
    acme = gateway.tenant("acme")
    deploy(acme, NS, "hello", HELLO)
    second = gateways.start(data_dir=gateway.settings.data_dir)
    other_url = f"{second.url}/fn/{NS}/hello"
    deadline = time.monotonic() + 60
    while httpx.get(other_url).status_code != 200:  # the second gateway warms the function
        assert time.monotonic() < deadline, "the second gateway never served the function"
        time.sleep(0.2)

    _trigger(acme, "web", enabled=False)
    # NOTIFY reaches the other process within moments (bounded wait, not a timing check)
    deadline = time.monotonic() + 20
    while (response := httpx.get(other_url)).status_code != 403:
        assert time.monotonic() < deadline, response.text
        time.sleep(0.1)
    _assert_refused(response)

    _trigger(acme, "web", enabled=True)
    deadline = time.monotonic() + 20
    while (response := httpx.get(other_url)).status_code != 200:
        assert time.monotonic() < deadline, response.text
        time.sleep(0.1)
    assert response.json() == {"hello": "world"}

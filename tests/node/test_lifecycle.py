"""A function's life on the real node, through the gateway's HTTP API as a tenant would:

- scale from zero: idle for the idle timeout, the operator scales its Deployment to 0 and
  the pod goes; the next call is held by the gateway (it wakes the function) and answered
  200 by a new pod under gVisor. The test prints the cold start's figures;
- ``enabled: false`` on its http trigger refuses ``/fn/`` calls (403) and removes the pods;
  ``true`` brings them back;
- a cron trigger's CronJob runs a pod on the node that calls the function through the
  gateway (the pod's termination message is the function's answer);
- FunctionJob run ids: 0 runs nothing, each higher one runs exactly once as a Job on the
  node, the same one never again, a lower one is refused.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kubernetes import client

from sless import policies
from sless.config import Settings
from tests.node.stack import (
    IDLE_TIMEOUT_S,
    Gateway,
    allow_invoker_to_gateway,
    call,
    deploy,
    onboard,
)
from tests.node.support import wait_for

ECHO = {
    "handler.py": (
        "import os\n"
        "def handle(event, context):\n"
        "    if event['body'] == {'fail': True}:\n"
        "        raise RuntimeError('asked to fail')\n"
        "    return {'body': event['body'], 'release': os.uname().release}\n"
    )
}

# builds and cold pods on 2 shared cores: minutes, not the default 120 s
pytestmark = pytest.mark.timeout(900)


def _pods(api: Any, ns: str, selector: dict[str, str]) -> list[Any]:
    text = ",".join(f"{k}={v}" for k, v in selector.items())
    return list(client.CoreV1Api(api).list_namespaced_pod(ns, label_selector=text).items)


def _replicas(api: Any, ns: str, name: str) -> int:
    deployment = client.AppsV1Api(api).read_namespaced_deployment(f"fn-{name}", ns)
    return int(deployment.spec.replicas or 0)


def _scaled_to_zero(api: Any, ns: str, name: str) -> bool:
    selector = policies.labels.function_selector(name)
    return _replicas(api, ns, name) == 0 and not _pods(api, ns, selector)


@pytest.fixture(scope="module")
def tenant(stack: tuple[Gateway, Settings], api: Any) -> Iterator[tuple[httpx.Client, str]]:
    """One tenant with the function ``echo`` built and serving."""
    gateway, settings = stack
    name = "life" + uuid.uuid4().hex[:6]
    ns = f"sless-{name}"
    with onboard(gateway, name) as tenant_client:
        wait_for("the tenant namespace", lambda: tenant_client.get("/v1/whoami").status_code == 200)
        wait_for(
            "the tenant's policies",
            lambda: len(client.NetworkingV1Api(api).list_namespaced_network_policy(ns).items) >= 4,
        )
        allow_invoker_to_gateway(api, ns, settings.gateway.port)
        try:
            deploy(tenant_client, ns, "echo", "python3.11", ECHO)
            yield tenant_client, ns
        finally:
            # the node has 2 CPUs: leave them to the next test
            for path in (
                "functions/echo",
                "functions/sleepy",
                "functions/busy",
                "triggers/web",
                "triggers/tick",
            ):
                tenant_client.delete(f"/v1/namespaces/{ns}/{path}")
            tenant_client.delete(f"/v1/namespaces/{ns}/jobs/nightly")
            tenant_client.delete(f"/v1/namespaces/{ns}/jobs/failing")


def test_an_idle_function_scales_to_zero_and_its_next_call_wakes_it(
    stack: tuple[Gateway, Settings],
    api: Any,
    tenant: tuple[httpx.Client, str],
    record_property: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gateway, _ = stack
    acme, ns = tenant
    deploy(acme, ns, "sleepy", "python3.11", ECHO)
    first = wait_for("sleepy's pod ready", lambda: call(gateway, ns, "sleepy"), every_s=1)
    assert first.status_code == 200, first.text

    # no call for the idle timeout: the operator scales it to 0 and its pod goes
    wait_for(
        "sleepy scaled to zero",
        lambda: _scaled_to_zero(api, ns, "sleepy"),
        timeout_s=IDLE_TIMEOUT_S * 3 + 120,
        every_s=1,
    )
    assert _replicas(api, ns, "sleepy") == 0

    # the next call is held, not refused: the gateway wakes the function
    scaled_up: list[float] = []
    answer: list[httpx.Response] = []

    def held_call() -> None:
        answer.append(httpx.get(f"{gateway.url}/fn/{ns}/sleepy", timeout=300))

    started = time.monotonic()
    caller = threading.Thread(target=held_call)
    caller.start()
    while caller.is_alive():
        if not scaled_up and _replicas(api, ns, "sleepy") >= 1:
            scaled_up.append(time.monotonic() - started)
        time.sleep(0.1)
    caller.join()
    cold_start_s = time.monotonic() - started
    [response] = answer
    assert response.status_code == 200, response.text
    assert response.json()["release"].endswith("-gvisor"), response.json()
    assert scaled_up, "the call was answered although the Deployment never scaled up"
    assert _replicas(api, ns, "sleepy") == 1
    record_property("cold_start_from_zero_s", round(cold_start_s, 2))
    record_property("scaled_up_after_s", round(scaled_up[0], 2))
    with capsys.disabled():
        print(
            f"\n[node figures] cold start from zero: {cold_start_s:.2f} s to the 200"
            f" (Deployment scaled to 1 after {scaled_up[0]:.2f} s)"
        )


BUSY = {
    "handler.py": (
        "import socket, time\n"
        "def handle(event, context):\n"
        "    time.sleep(3)\n"
        "    return {'pod': socket.gethostname()}\n"
    )
}


def test_concurrent_load_scales_the_function_out_to_pods_that_share_it(
    stack: tuple[Gateway, Settings],
    api: Any,
    tenant: tuple[httpx.Client, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Six calls at a time of a function with ``concurrency: 1`` and ``max_instances: 3``:
    the gateway's autoscaler raises the Deployment's replicas, and the calls are answered
    by more than one pod; never more than three."""
    gateway, _ = stack
    acme, ns = tenant
    deploy(acme, ns, "busy", "python3.11", BUSY, concurrency=1, max_instances=3, timeout_s=60)
    first = wait_for("busy's pod ready", lambda: call(gateway, ns, "busy"), every_s=1)
    assert first.status_code == 200, first.text

    pods: set[str] = set()
    statuses: list[int] = []
    highest = 0
    started = time.monotonic()
    while len(pods) < 2 and time.monotonic() - started < 300:
        answers: list[httpx.Response] = []

        def one(into: list[httpx.Response] = answers) -> None:
            into.append(httpx.get(f"{gateway.url}/fn/{ns}/busy", timeout=120))

        callers = [threading.Thread(target=one) for _ in range(6)]
        for caller in callers:
            caller.start()
        while any(c.is_alive() for c in callers):
            highest = max(highest, _replicas(api, ns, "busy"))
            time.sleep(0.2)
        statuses += [a.status_code for a in answers]
        pods |= {a.json()["pod"] for a in answers if a.status_code == 200}
    scaled_s = time.monotonic() - started
    assert len(pods) >= 2, f"answered by {pods} only; statuses {statuses}"
    assert 2 <= highest <= 3, highest
    # beyond max_instances x concurrency a call waits for room, else 429: nothing else
    assert set(statuses) <= {200, 429}, statuses
    with capsys.disabled():
        print(
            f"\n[node figures] 6 concurrent calls: {len(pods)} pods answered after"
            f" {scaled_s:.1f} s, replicas up to {highest} (max_instances 3)"
        )
    assert acme.delete(f"/v1/namespaces/{ns}/functions/busy").status_code == 200


def test_a_disabled_http_trigger_refuses_calls_and_removes_the_pods(
    stack: tuple[Gateway, Settings], api: Any, tenant: tuple[httpx.Client, str]
) -> None:
    gateway, _ = stack
    acme, ns = tenant
    answer = wait_for("echo's answer", lambda: call(gateway, ns, "echo"), every_s=1)
    assert answer.status_code == 200, answer.text
    trigger = f"/v1/namespaces/{ns}/triggers/web"
    off = acme.put(trigger, json={"function": "echo", "type": "http", "enabled": False})
    assert off.status_code in (200, 201), off.text

    def refused() -> httpx.Response | None:
        got = httpx.get(f"{gateway.url}/fn/{ns}/echo", timeout=60)
        return got if got.status_code == 403 else None

    refusal = wait_for("the gateway refusing echo", refused)
    assert refusal.json()["error"]["code"] == "http_trigger_disabled", refusal.text
    wait_for("echo's pods gone", lambda: _scaled_to_zero(api, ns, "echo"), every_s=1)

    on = acme.put(trigger, json={"function": "echo", "type": "http", "enabled": True})
    assert on.status_code == 200, on.text
    back = wait_for("echo answering again", lambda: call(gateway, ns, "echo"), every_s=1)
    assert back.status_code == 200, back.text
    assert _replicas(api, ns, "echo") == 1
    assert acme.delete(trigger).status_code == 200


def _termination_message(pod: Any) -> str | None:
    for status in pod.status.container_statuses or []:
        terminated = status.state.terminated if status.state else None
        if terminated is not None and terminated.message:
            return str(terminated.message)
    return None


def test_a_cron_trigger_calls_the_function_from_a_pod_on_the_node(
    api: Any, tenant: tuple[httpx.Client, str]
) -> None:
    acme, ns = tenant
    marker = uuid.uuid4().hex[:8]
    trigger = f"/v1/namespaces/{ns}/triggers/tick"
    made = acme.put(
        trigger,
        json={
            "function": "echo",
            "type": "cron",
            "schedule": "* * * * *",
            "payload": {"tick": marker},
        },
    )
    assert made.status_code == 201, made.text
    selector = {policies.labels.TRIGGER: "tick"}

    def answered() -> str | None:
        for pod in _pods(api, ns, selector):
            if pod.status.phase == "Succeeded":
                return _termination_message(pod)
        return None

    # the next minute's tick, then a cold invoker pod and perhaps a cold function
    message = wait_for("a cron run's answer", answered, timeout_s=300, every_s=2)
    assert json.loads(message)["body"] == {"tick": marker}, message

    off = acme.put(
        trigger,
        json={"function": "echo", "type": "cron", "schedule": "* * * * *", "enabled": False},
    )
    assert off.status_code == 200, off.text
    cron = client.BatchV1Api(api)
    wait_for(
        "the CronJob suspended",
        lambda: (
            cron.read_namespaced_cron_job(policies.labels.cronjob_name("tick"), ns).spec.suspend
        ),
    )
    assert acme.delete(trigger).status_code == 200


def _runs(api: Any, ns: str) -> list[Any]:
    selector = f"{policies.labels.FUNCTION_JOB}=nightly"
    return list(client.BatchV1Api(api).list_namespaced_job(ns, label_selector=selector).items)


def test_function_job_run_ids_run_once_each_as_jobs_on_the_node(
    api: Any, tenant: tuple[httpx.Client, str]
) -> None:
    acme, ns = tenant
    job = f"/v1/namespaces/{ns}/jobs/nightly"

    def status() -> dict[str, Any]:
        return dict(acme.get(job).json().get("status") or {})

    def finished(run_id: int) -> dict[str, Any] | None:
        got = status()
        done = got.get("phase") in ("Succeeded", "Failed")
        return got if got.get("run_id") == run_id and done else None

    created = acme.put(job, json={"function": "echo", "run_id": 0, "payload": {"n": 0}})
    assert created.status_code == 201, created.text
    wait_for("run 0 Idle", lambda: status().get("phase") == "Idle")
    assert _runs(api, ns) == []

    assert acme.put(job, json={"function": "echo", "run_id": 1, "payload": {"n": 1}}).is_success
    first = wait_for("run 1", lambda: finished(1), timeout_s=300, every_s=2)
    assert first["phase"] == "Succeeded", first
    assert json.loads(first["result"])["body"] == {"n": 1}, first
    assert len(_runs(api, ns)) == 1

    # the same run id again: nothing runs (the operator retries every second here)
    assert acme.put(job, json={"function": "echo", "run_id": 1, "payload": {"n": 9}}).is_success
    time.sleep(5)
    assert len(_runs(api, ns)) == 1
    assert json.loads(status()["result"])["body"] == {"n": 1}
    # a lower one is refused: runs only move forward
    assert acme.put(job, json={"function": "echo", "run_id": 0}).status_code == 409

    assert acme.put(job, json={"function": "echo", "run_id": 2, "payload": {"n": 2}}).is_success
    second = wait_for("run 2", lambda: finished(2), timeout_s=300, every_s=2)
    assert second["phase"] == "Succeeded", second
    assert json.loads(second["result"])["body"] == {"n": 2}, second
    assert len(_runs(api, ns)) == 2
    assert acme.delete(job).status_code == 200


def test_a_failed_job_run_says_why_in_its_status(
    api: Any, tenant: tuple[httpx.Client, str]
) -> None:
    """The run's pod reached the gateway by name (cluster DNS) and the function failed: the
    status the tenant reads names curl's exit and the HTTP error, not just "failed"."""
    acme, ns = tenant
    job = f"/v1/namespaces/{ns}/jobs/failing"
    made = acme.put(job, json={"function": "echo", "run_id": 1, "payload": {"fail": True}})
    assert made.status_code == 201, made.text

    def finished() -> dict[str, Any] | None:
        got = dict(acme.get(job).json().get("status") or {})
        return got if got.get("phase") in ("Succeeded", "Failed") else None

    status = wait_for("the failing run", finished, timeout_s=300, every_s=2)
    assert status["phase"] == "Failed", status
    assert status["message"].startswith(
        "the run failed: Error: the call answered an HTTP error (curl exit 22)"
    ), status
    assert acme.delete(job).status_code == 200

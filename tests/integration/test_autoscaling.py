"""Autoscaling on concurrency in embedded mode, on the real platform with real workers.

Load ramps from 1 to 50 concurrent calls of a function with ``concurrency: 2`` and
``max_instances: 3``. The instance count (the tenant's own metrics) follows the calls in
flight up to 3 and never past it; calls beyond ``3 * 2`` wait ``queue_timeout_s``, then get
429 with ``Retry-After``; the throttled counter counts exactly those 429s; and after the idle
window the pool shrinks back to ``min_instances``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

#: long enough that every call of one ramp step is in flight at once, whatever the load
SLOW = {
    "handler.py": (
        "import time\n\ndef handle(event, context):\n    time.sleep(3)\n    return 'done'\n"
    )
}
STEPS = (1, 2, 5, 10, 20, 50)
SLESS = str(Path(sys.executable).parent / "sless")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.gateway.queue_timeout_s = 1.0
    # long enough that a worker is not reaped between two bursts of the ramp on a loaded
    # machine (a reaped worker would count a second cold start below)
    settings.sandbox.idle_timeout_s = 8.0
    settings.sandbox.prestart_size = 0
    return settings


def _figures(client: httpx.Client, name: str) -> dict[str, Any]:
    response = client.get("/v1/namespaces/sless-acme/metrics")
    assert response.status_code == 200, response.text
    return dict(response.json()["functions"].get(name, {}))


def _burst(url: str, n: int) -> list[httpx.Response]:
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(lambda _: httpx.get(url, timeout=60), range(n)))


def test_load_ramp_scales_workers_to_max_instances_then_throttles(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    spec = {"concurrency": 2, "max_instances": 3, "timeout_s": 30}
    deploy(acme, "sless-acme", "slow", SLOW, spec)
    url = f"{gateway.url}/fn/sless-acme/slow"

    workers: list[int] = []
    throttled: list[httpx.Response] = []
    for n in STEPS:
        responses = _burst(url, n)
        statuses = [r.status_code for r in responses]
        assert set(statuses) <= {200, 429}, statuses
        figures = _figures(acme, "slow")
        workers.append(int(figures["gateway_service_count"]))
        # never more workers started than max_instances (the pool only grows, it never
        # replaces a worker here)
        assert figures["gateway_function_cold_starts"] <= 3, figures
        if n <= 6:
            # within max_instances * concurrency: everyone is served
            assert statuses == [200] * n, (n, statuses)
        else:
            # the first 6 take every slot for 3 s, the others give up after 1 s
            assert statuses.count(200) >= 6, (n, statuses)
            assert statuses.count(429) >= 1, (n, statuses)
        throttled += [r for r in responses if r.status_code == 429]

    # one worker for 1 and 2 calls (concurrency 2), then ceil(5 / 2) = 3 = max_instances
    assert workers == [1, 1, 3, 3, 3, 3], workers
    assert len(throttled) >= 44 - 3 * 6  # at 50 calls, at least 44 could not be served
    for response in throttled:
        assert int(response.headers["retry-after"]) >= 1
        error = response.json()["error"]
        assert error["code"] == "too_many_requests"
        assert "max_instances" in error["message"]
    figures = _figures(acme, "slow")
    assert figures["gateway_function_throttled_total"] == len(throttled)
    assert figures["gateway_function_invocation_total"]["code=429"] == len(throttled)

    # the idle window passes (8 s, reaped every 5 s): back to min_instances (0)
    deadline = time.monotonic() + 60
    while int(_figures(acme, "slow")["gateway_service_count"]) > 0:
        assert time.monotonic() < deadline, "the idle workers were not reaped"
        time.sleep(0.5)
    # and the next call starts one worker again
    assert httpx.get(url, timeout=60).status_code == 200
    assert int(_figures(acme, "slow")["gateway_service_count"]) == 1


def test_max_instances_is_capped_by_the_tenant_quota(
    gateway: RunningGateway, settings: Settings
) -> None:
    acme = gateway.tenant("acme")
    path = "/v1/namespaces/sless-acme/functions/f"
    limit = settings.limits.max_instances
    refused = acme.put(path, json={"max_instances": limit + 1})
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert error["details"] == {
        "quota": "max_instances",
        "used": 0,
        "requested": limit + 1,
        "limit": limit,
    }
    assert acme.put(path, json={"max_instances": limit}).status_code == 201
    assert acme.get(path).json()["spec"]["max_instances"] == limit
    invalid = acme.put(path, json={"min_instances": 3, "max_instances": 2})
    assert invalid.status_code == 422, invalid.text
    assert "may not exceed max_instances" in invalid.text


def test_sless_deploy_sets_the_scaling_fields(gateway: RunningGateway, tmp_path: Path) -> None:
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    token = created.json()["token"]
    code = tmp_path / "code"
    code.mkdir()
    (code / "handler.py").write_text("def handle(event, context):\n    return 'hi'\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}

    def sless(*args: str) -> subprocess.CompletedProcess[str]:
        command = [SLESS, *args, "--url", gateway.url, "--token", token]
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    result = sless(
        "deploy",
        str(code),
        "-n",
        "f",
        "--concurrency",
        "8",
        "--min-instances",
        "1",
        "--max-instances",
        "6",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    spec = gateway.client(token).get("/v1/namespaces/sless-acme/functions/f").json()["spec"]
    assert (spec["concurrency"], spec["min_instances"], spec["max_instances"]) == (8, 1, 6)
    over = sless("deploy", str(code), "-n", "g", "--max-instances", "11")
    assert over.returncode != 0
    assert "quota max_instances exceeded" in over.stderr

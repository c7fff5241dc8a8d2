"""``/metrics`` and ``/v1/namespaces/{ns}/metrics`` on the real gateway (real workers)."""

from __future__ import annotations

import time

import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

METRICS_TOKEN = "sl_m_test-metrics-token-" + "m" * 24
HELLO = {"handler.py": "def handle(event, context):\n    return {'ok': True}\n"}
SLOW = {
    "handler.py": (
        "import time\ndef handle(event, context):\n    time.sleep(5)\n    return {'late': True}\n"
    )
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.metrics.token = SecretStr(METRICS_TOKEN)
    return settings


def test_metrics_need_the_admin_or_the_metrics_token(gateway: RunningGateway) -> None:
    assert httpx.get(f"{gateway.url}/metrics").status_code == 401
    acme = gateway.tenant("acme")
    assert acme.get("/metrics").status_code == 401
    assert gateway.admin.get("/metrics").status_code == 200
    wrong = httpx.get(f"{gateway.url}/metrics", headers={"Authorization": "Bearer " + "x" * 40})
    assert wrong.status_code == 401
    scraper = httpx.get(
        f"{gateway.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    assert scraper.status_code == 200
    assert "# TYPE gateway_function_invocation_total counter" in scraper.text
    # the metrics token opens /metrics only
    other = httpx.get(
        f"{gateway.url}/v1/admin/tenants", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
    )
    assert other.status_code == 401


def test_invocations_are_counted_per_function_with_bounded_labels(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    other = gateway.tenant("other")
    deploy(acme, "sless-acme", "hello", HELLO)
    deploy(acme, "sless-acme", "slow", SLOW, {"timeout_s": 1})
    deploy(other, "sless-other", "theirs", HELLO)
    for _ in range(3):
        assert httpx.get(f"{gateway.url}/fn/sless-acme/hello/some/path?q=1").status_code == 200
    assert httpx.get(f"{gateway.url}/fn/sless-acme/slow").status_code == 504
    assert httpx.get(f"{gateway.url}/fn/sless-other/theirs").status_code == 200
    # names that are no function never become labels
    assert httpx.get(f"{gateway.url}/fn/sless-acme/no-such-function").status_code == 404

    text = gateway.admin.get("/metrics").text
    hello = 'namespace="sless-acme"'
    assert (
        'gateway_function_invocation_total{code="200",function_name="hello",' + hello + "} 3.0"
    ) in text
    assert 'gateway_function_timeouts_total{function_name="slow",' + hello + "} 1.0" in text
    assert 'gateway_functions_seconds_count{function_name="hello",' + hello + "} 3.0" in text
    assert 'gateway_function_invocation_started_total{function_name="hello",' in text
    assert 'gateway_service_count{function_name="hello",' + hello + "} 1.0" in text
    assert "no-such-function" not in text
    assert "some/path" not in text
    assert 'sless_upload_verdicts_total{stage="final",verdict="allow"} 3.0' in text
    assert 'sless_async_queue_depth{state="queued"} 0.0' in text
    assert "sless_invocation_records_dropped_total 0.0" in text
    assert "sless_invocation_records_replayed_total" in text
    # two builds ran (hello's code is built once for both functions that have it)
    built = 'sless_build_duration_seconds_{}{{result="succeeded",runtime="python3.11"}}'
    assert sample(text, built.format("count")) == 2.0
    assert sample(text, built.format("sum")) > 0.0
    assert 'result="failed"' not in text
    # the writer's flush latency: batches written, seconds in all
    written = wait_for_sample(gateway, "sless_invocation_records_written_total", at_least=5)
    assert written >= 5
    flushes = sample(gateway.admin.get("/metrics").text, "sless_invocation_flush_seconds_count")
    assert 1 <= flushes <= written
    assert sample(gateway.admin.get("/metrics").text, "sless_invocation_flush_seconds_sum") > 0

    mine = acme.get("/v1/namespaces/sless-acme/metrics").json()
    assert mine["namespace"] == "sless-acme"
    assert set(mine["functions"]) == {"hello", "slow"}
    counts = mine["functions"]["hello"]["gateway_function_invocation_total"]
    assert counts == {"code=200": 3.0}
    assert mine["functions"]["slow"]["gateway_function_timeouts_total"] == 1.0

    plain = acme.get("/v1/namespaces/sless-acme/metrics", headers={"Accept": "text/plain"})
    assert plain.headers["content-type"].startswith("text/plain")
    assert 'function_name="hello"' in plain.text
    assert "theirs" not in plain.text
    assert "sless-other" not in plain.text
    # another tenant's namespace: 404, as for every object that is not the caller's
    assert acme.get("/v1/namespaces/sless-other/metrics").status_code == 404


def sample(text: str, name: str) -> float:
    """The value of the one sample ``name`` (with its labels as written) in ``text``."""
    [value] = [line.rpartition(" ")[2] for line in text.splitlines() if line.startswith(name + " ")]
    return float(value)


def wait_for_sample(gateway: RunningGateway, name: str, *, at_least: float) -> float:
    """``name``'s value once it reached ``at_least`` (the writer flushes every 0.2 s)."""
    deadline = time.monotonic() + 30
    while True:
        value = sample(gateway.admin.get("/metrics").text, name)
        if value >= at_least or time.monotonic() > deadline:
            return value
        time.sleep(0.1)

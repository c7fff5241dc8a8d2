"""The metrics table: bounded labels, code classes, a tenant's view."""

from __future__ import annotations

from sless.gateway.metrics import OTHER, GatewayMetrics, as_json, code_label, render_text


def test_codes_are_known_codes_or_classes() -> None:
    assert code_label(200) == "200"
    assert code_label(429) == "429"
    assert code_label(418) == "4xx"
    assert code_label(299) == "2xx"
    assert code_label(599) == "5xx"


def test_a_tenant_cannot_mint_unbounded_function_series() -> None:
    metrics = GatewayMetrics(max_functions_per_namespace=2)
    for i in range(50):
        metrics.record("sless-acme", f"fn-{i}", 200, 0.01)
    metrics.record("sless-other", "theirs", 200, 0.01)
    names = {
        s.labels["function_name"]
        for m in metrics.registry.collect()
        for s in m.samples
        if s.labels.get("namespace") == "sless-acme"
    }
    # 2 * max_functions named series, the rest under _other
    assert names == {"fn-0", "fn-1", "fn-2", "fn-3", OTHER}
    mine = as_json(metrics.of_namespace("sless-acme"))["functions"]
    assert mine[OTHER]["gateway_function_invocation_total"] == {"code=200": 46.0}
    assert mine["fn-0"]["gateway_function_invocation_started_total"] == 1.0


def test_a_namespace_view_holds_only_its_own_series() -> None:
    metrics = GatewayMetrics(max_functions_per_namespace=10)
    metrics.record("sless-acme", "hello", 504, 1.0)
    metrics.record("sless-acme", "hello", 429, 0.0)
    metrics.record("sless-other", "theirs", 200, 0.1)
    text = render_text(metrics.of_namespace("sless-acme")).decode()
    assert 'gateway_function_timeouts_total{function_name="hello",namespace="sless-acme"} 1.0' in (
        text
    )
    assert 'gateway_function_throttled_total{function_name="hello",namespace="sless-acme"} 1.0' in (
        text
    )
    assert "sless-other" not in text
    assert "theirs" not in text


def test_one_tenant_minting_names_leaves_room_for_the_others() -> None:
    metrics = GatewayMetrics(max_functions_per_namespace=2)
    for i in range(20_000):
        metrics.record("sless-acme", f"fn-{i}", 200, 0.01)
    metrics.record("sless-other", "theirs", 200, 0.01)
    assert metrics.series_labels("sless-other", "theirs") == ("sless-other", "theirs")


def test_consumer_lag_series_are_bounded_per_namespace() -> None:
    metrics = GatewayMetrics(max_functions_per_namespace=1)
    lags = {("sless-acme", f"t-{i}", "fn"): 3 for i in range(10)}
    lags[("sless-other", "theirs", "fn")] = 7
    metrics.set_consumer_lag(lags)
    samples = {
        (s.labels["namespace"], s.labels["trigger"]): s.value
        for m in metrics.registry.collect()
        if m.name == "sless_rabbitmq_consumer_lag_messages"
        for s in m.samples
    }
    # 2 * max_functions named triggers per namespace, the rest added up under _other
    assert samples == {
        ("sless-acme", "t-0"): 3,
        ("sless-acme", "t-1"): 3,
        ("sless-acme", OTHER): 24,
        ("sless-other", "theirs"): 7,
    }
    metrics.set_consumer_lag({})  # a consumer that stopped leaves no series behind
    assert not [
        s
        for m in metrics.registry.collect()
        if m.name == "sless_rabbitmq_consumer_lag_messages"
        for s in m.samples
    ]


def test_build_durations_are_read_at_scrape() -> None:
    builds: dict[tuple[str, str], tuple[int, float]] = {}
    metrics = GatewayMetrics(max_functions_per_namespace=1)
    metrics.watch_builds(lambda: builds)
    assert "sless_build_duration_seconds_count" not in metrics.text().decode()
    builds[("python3.11", "succeeded")] = (2, 3.5)
    builds[("nodejs20", "failed")] = (1, 0.25)
    text = metrics.text().decode()
    assert 'sless_build_duration_seconds_count{result="succeeded",runtime="python3.11"} 2.0' in text
    assert 'sless_build_duration_seconds_sum{result="succeeded",runtime="python3.11"} 3.5' in text
    assert 'sless_build_duration_seconds_count{result="failed",runtime="nodejs20"} 1.0' in text

"""The per-call metrics are plain counts, exposed as prometheus_client's own metric objects
exposed them: the same families, samples, labels, values and order (issue 32: four
children under locks cost more per call than the rest of the metrics path).

The reference below is what ``GatewayMetrics`` was before: ``Counter`` and ``Histogram``
children bound per function, incremented per call."""

from __future__ import annotations

import bisect
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from sless.gateway.metrics import _SECONDS_BUCKETS, GatewayMetrics, code_label

_FAMILIES = (
    "gateway_function_invocation",
    "gateway_functions_seconds",
    "gateway_function_invocation_started",
    "gateway_function_timeouts",
    "gateway_function_throttled",
)


class _Reference:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        fn = ("namespace", "function_name")
        self.invocations = Counter(
            "gateway_function_invocation",
            "Calls of a function, by HTTP status code (known codes, else the class: 4xx)",
            (*fn, "code"),
            registry=r,
        )
        self.seconds = Histogram(
            "gateway_functions_seconds",
            "Duration of a function call as the gateway saw it",
            fn,
            buckets=_SECONDS_BUCKETS,
            registry=r,
        )
        self.started = Counter(
            "gateway_function_invocation_started",
            "Calls that reached an existing function (synchronous and queued)",
            fn,
            registry=r,
        )
        self.timeouts = Counter(
            "gateway_function_timeouts",
            "Calls that ran past the function's timeout_s",
            fn,
            registry=r,
        )
        self.throttled = Counter(
            "gateway_function_throttled",
            "Calls refused with 429 (the tenant's rate or concurrency limit, or every instance"
            " of the function busy at max_instances past the queue timeout)",
            fn,
            registry=r,
        )
        self.bound: set[tuple[str, str]] = set()

    def record(self, labels: tuple[str, str], status: int, seconds: float) -> None:
        if labels not in self.bound:  # children bound when the series is made
            self.bound.add(labels)
            for metric in (self.seconds, self.started, self.timeouts, self.throttled):
                metric.labels(*labels)
        self.started.labels(*labels).inc()
        self.invocations.labels(*labels, code_label(status)).inc()
        self.seconds.labels(*labels).observe(seconds)
        if status == 504:
            self.timeouts.labels(*labels).inc()
        elif status == 429:
            self.throttled.labels(*labels).inc()


def _samples(registry: object) -> list[tuple[str, str, tuple[tuple[str, str], ...], float]]:
    """Every sample of the per-call families, in order; a ``_created`` time as present."""
    found = []
    for metric in registry.collect():  # type: ignore[attr-defined]
        if metric.name not in _FAMILIES:
            continue
        for sample in metric.samples:
            value = 0.0 if sample.name.endswith("_created") else sample.value
            found.append((metric.name, sample.name, tuple(sample.labels.items()), value))
    return found


def _families(registry: object) -> list[tuple[str, str, str]]:
    return [
        (m.name, m.type, m.documentation)
        for m in registry.collect()  # type: ignore[attr-defined]
        if m.name in _FAMILIES
    ]


_calls = st.lists(
    st.tuples(
        st.sampled_from([("sless-a", "f"), ("sless-a", "g"), ("sless-b", "f")]),
        st.sampled_from([200, 201, 404, 418, 429, 451, 500, 504, 599, 302]),
        st.one_of(
            st.sampled_from([*_SECONDS_BUCKETS, 0.0, 1e9]),
            st.floats(min_value=0, max_value=2000, allow_nan=False),
        ),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(_calls)
def test_the_counts_expose_what_the_prometheus_children_exposed(
    calls: list[tuple[tuple[str, str], int, float]],
) -> None:
    metrics, reference = GatewayMetrics(max_functions_per_namespace=10), _Reference()
    for labels, status, seconds in calls:
        metrics.record(*labels, status, seconds)
        reference.record(labels, status, seconds)
    assert _families(metrics.registry) == _families(reference.registry)
    assert _samples(metrics.registry) == _samples(reference.registry)


def test_the_text_is_the_same_but_for_the_created_times() -> None:
    metrics, reference = GatewayMetrics(max_functions_per_namespace=10), _Reference()
    rng = random.Random(7)
    for _ in range(500):
        labels = rng.choice([("sless-a", "f"), ("sless-b", "g")])
        status = rng.choice([200, 404, 429, 504, 418])
        seconds = rng.choice(_SECONDS_BUCKETS) * rng.choice([0.5, 1, 1.5])
        metrics.record(*labels, status, seconds)
        reference.record(labels, status, seconds)

    def text(registry: CollectorRegistry) -> list[str]:
        lines = generate_latest(registry).decode().splitlines()
        return [
            line for line in lines if "_created" not in line and any(f in line for f in _FAMILIES)
        ]

    assert text(metrics.registry) == text(reference.registry)
    assert any('le="0.005"' in line for line in text(metrics.registry))


def test_a_bucket_holds_the_calls_up_to_its_bound() -> None:
    metrics = GatewayMetrics(max_functions_per_namespace=10)
    for seconds in (0.005, 0.0050001, 900.0, 901.0):
        metrics.record("sless-a", "f", 200, seconds)
    buckets = {
        s.labels["le"]: s.value
        for m in metrics.registry.collect()
        for s in m.samples
        if s.name == "gateway_functions_seconds_bucket"
    }
    assert buckets["0.005"] == 1.0
    assert buckets["0.01"] == 2.0
    assert buckets["900.0"] == 3.0
    assert buckets["+Inf"] == 4.0
    assert bisect.bisect_left(_SECONDS_BUCKETS, 0.005) == 0

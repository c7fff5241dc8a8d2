"""Prometheus metrics of one gateway: per function invocations, and the platform's state.

Names follow OpenFaaS where it has one (``gateway_function_invocation_total``,
``gateway_functions_seconds``, ``gateway_function_invocation_started``,
``gateway_service_count``) and Prometheus conventions elsewhere (``sless_*``).

**Labels are bounded.** ``namespace`` and ``function_name`` come only from calls to a
function that exists (the invocation path sets ``known`` after the backend found it), so
they are bounded by the tenants and their ``max_functions`` quota; a tenant that creates
and deletes functions over and over could still mint names, so each namespace keeps at
most ``2 * max_functions`` function series and counts the rest under
``function_name="_other"``, and the whole table is capped at ``MAX_FUNCTION_SERIES``
(beyond it: ``namespace="_other"``). ``code`` is one of ``KNOWN_CODES`` or a class
(``2xx``...). ``stage`` and ``verdict`` are the validator's fixed names. No path, header,
query or body ever becomes a label.

**The invoke path is cheap:** ``record`` looks up one dict entry per call (a ``_Series``),
then adds to plain integers; ``_CallCollector`` exposes them at scrape time as the
``Counter`` and ``Histogram`` children they replace did.

The registry is per app (``create_app`` builds one), never the process-global default:
several gateways in one test process must not share counters.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from sless.validation import Report

#: HTTP status codes kept as they are; any other one is counted by class (``4xx``)
KNOWN_CODES = frozenset(
    {200, 201, 202, 204, 400, 401, 403, 404, 408, 413, 422, 429, 500, 502, 503, 504}
)
_CODE_LABELS = {code: str(code) for code in KNOWN_CODES}
#: at most this many (namespace, function) series in one gateway
MAX_FUNCTION_SERIES = 10_000
OTHER = "_other"
TEXT_CONTENT_TYPE = CONTENT_TYPE_LATEST

#: seconds: OpenFaaS-like buckets from 5 ms to the longest timeout (900 s)
_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)


def code_label(status: int) -> str:
    return _CODE_LABELS.get(status) or f"{status // 100}xx"


class _Series:
    """One function's per-call counts: plain numbers, exposed by ``_CallCollector``."""

    __slots__ = ("buckets", "codes", "created", "labels", "started", "sum", "throttled", "timeouts")

    def __init__(self, labels: tuple[str, str]) -> None:
        self.labels = labels
        self.created = time.time()
        self.started = 0
        self.timeouts = 0
        self.throttled = 0
        #: calls per bucket of ``_SECONDS_BUCKETS`` (not cumulative; the last: past them)
        self.buckets = [0] * (len(_SECONDS_BUCKETS) + 1)
        self.sum = 0.0
        #: status → its code's cell (statuses of one class share it)
        self.codes: dict[int, list[Any]] = {}


class _CallCollector:
    """The per-call families as prometheus_client's ``Counter`` and ``Histogram`` exposed
    them, read from ``_Series``: same samples, labels and order (``_created`` included).
    A call adds to integers and nothing else (issue 32: four children under locks cost
    more per call than the rest of the metrics path;
    tests/unit/gateway/test_metrics_counts.py)."""

    def __init__(self, metrics: GatewayMetrics) -> None:
        self._metrics = metrics

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        fn = ("namespace", "function_name")
        series = list(self._metrics._series.values())
        invocations = Metric("gateway_function_invocation", _INVOCATIONS_HELP, "counter")
        for (labels, code), (count, created) in list(self._metrics._codes.items()):
            named = {**dict(zip(fn, labels, strict=True)), "code": code}
            invocations.add_sample("gateway_function_invocation_total", named, float(count))
            invocations.add_sample("gateway_function_invocation_created", named, created)
        yield invocations
        seconds = Metric("gateway_functions_seconds", _SECONDS_HELP, "histogram")
        for one in series:
            named = dict(zip(fn, one.labels, strict=True))
            total = 0.0
            for bound, count in zip(_BOUND_LABELS, one.buckets, strict=True):
                total += count
                seconds.add_sample(
                    "gateway_functions_seconds_bucket", {**named, "le": bound}, total
                )
            seconds.add_sample("gateway_functions_seconds_count", named, total)
            seconds.add_sample("gateway_functions_seconds_sum", named, one.sum)
            seconds.add_sample("gateway_functions_seconds_created", named, one.created)
        yield seconds
        for name, help_text, attribute in _COUNTS:
            counter = Metric(name, help_text, "counter")
            for one in series:
                named = dict(zip(fn, one.labels, strict=True))
                counter.add_sample(f"{name}_total", named, float(getattr(one, attribute)))
                counter.add_sample(f"{name}_created", named, one.created)
            yield counter


_INVOCATIONS_HELP = "Calls of a function, by HTTP status code (known codes, else the class: 4xx)"
_SECONDS_HELP = "Duration of a function call as the gateway saw it"
_COUNTS = (
    (
        "gateway_function_invocation_started",
        "Calls that reached an existing function (synchronous and queued)",
        "started",
    ),
    ("gateway_function_timeouts", "Calls that ran past the function's timeout_s", "timeouts"),
    (
        "gateway_function_throttled",
        "Calls refused with 429 (the tenant's rate or concurrency limit, or every instance"
        " of the function busy at max_instances past the queue timeout)",
        "throttled",
    ),
)
#: the buckets' ``le`` labels, as prometheus_client writes them
_BOUND_LABELS = (*(repr(float(b)) for b in _SECONDS_BUCKETS), "+Inf")


class GatewayMetrics:
    def __init__(self, *, max_functions_per_namespace: int) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.max_per_namespace = max(1, 2 * max_functions_per_namespace)
        fn = ("namespace", "function_name")
        r = self.registry
        r.register(_CallCollector(self))
        self.inflight = Gauge("gateway_function_inflight", "Calls being served now", fn, registry=r)
        self.replicas = Gauge(
            "gateway_service_count",
            "Instances of the function now: workers (embedded), the Deployment's replicas"
            " (Kubernetes, as the autoscaler last read them)",
            fn,
            registry=r,
        )
        self.cold_starts = Gauge(
            "gateway_function_cold_starts",
            "Workers started for the function's serving version (a counter per version;"
            " it restarts from 0 on a new version)",
            fn,
            registry=r,
        )
        self.cold_start_seconds = Histogram(
            "sless_cold_start_seconds",
            "How long a call waited for a worker (or a pod) started for it",
            fn,
            buckets=_SECONDS_BUCKETS,
            registry=r,
        )
        self._platform_metrics()
        self._series: dict[tuple[str, str], _Series] = {}
        #: (series labels, code label) → [calls, created]: one cell per code, in order
        self._codes: dict[tuple[tuple[str, str], str], list[Any]] = {}
        self._per_namespace: dict[str, int] = {}

    def _platform_metrics(self) -> None:
        """The figures of the platform rather than of one function's calls."""
        r = self.registry
        self.express_calls = Counter(
            "sless_gateway_express_calls",
            "Calls served by the express path (SLESS_GATEWAY_HTTP=express), of all calls",
            registry=r,
        )
        self.verdicts = Counter(
            "sless_upload_verdicts",
            "Upload validation verdicts by stage (archive, static, manifest, llm...)",
            ("stage", "verdict"),
            registry=r,
        )
        self.validation_seconds = Histogram(
            "sless_validation_duration_seconds",
            "Duration of one validation stage of one upload (cached reports not counted)",
            ("stage",),
            buckets=(0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
            registry=r,
        )
        self.queue_depth = Gauge(
            "sless_async_queue_depth",
            "Queued asynchronous calls, by state",
            ("state",),
            registry=r,
        )
        self.cron_ticks = Gauge(
            "sless_cron_ticks_fired",
            "Cron ticks this process won and fired since it started",
            registry=r,
        )
        self.consumer_lag = Gauge(
            "sless_rabbitmq_consumer_lag_messages",
            "Messages ready in a rabbitmq trigger's queue, not yet delivered to its consumer"
            " (as the broker said at most 10 s ago)",
            ("namespace", "trigger", "function_name"),
            registry=r,
        )

    def watch_recorder(self, recorder: Any) -> None:
        """Export the invocation writer's own counters, read at every scrape."""
        self.registry.register(_RecorderCollector(recorder))

    def watch_builds(
        self, durations: Callable[[], dict[tuple[str, str], tuple[int, float]]]
    ) -> None:
        """Export the builds' durations (``Backend.build_durations``), read at every scrape."""
        self.registry.register(_BuildCollector(durations))

    def watch_egress(self, connections: Callable[[], dict[str, tuple[int, int]]]) -> None:
        """Export the egress proxies' connections per namespace
        (``Backend.egress_connections``), read at every scrape."""
        self.registry.register(_EgressCollector(connections))

    # -- the invoke path ---------------------------------------------------------------

    def series(self, namespace: str, name: str) -> _Series:
        key = (namespace, name)
        found = self._series.get(key)
        if found is not None:
            return found
        # names past a bound are not remembered: a tenant minting names fills neither the
        # table nor another tenant's share of it
        if len(self._series) >= MAX_FUNCTION_SERIES:
            key = (OTHER, OTHER)
        elif self._per_namespace.get(namespace, 0) >= self.max_per_namespace:
            key = (namespace, OTHER)
        found = self._series.get(key)
        if found is None:
            found = self._series[key] = _Series(key)
            self._per_namespace[key[0]] = self._per_namespace.get(key[0], 0) + 1
        return found

    def record(self, namespace: str, name: str, status: int, seconds: float) -> None:
        """One call of an existing function ended (the invoke path's ``finally``)."""
        series = self._series.get((namespace, name)) or self.series(namespace, name)
        series.started += 1
        cell = series.codes.get(status)
        if cell is None:
            cell = series.codes[status] = self._code_cell(series.labels, code_label(status))
        cell[0] += 1
        series.buckets[bisect_left(_SECONDS_BUCKETS, seconds)] += 1
        series.sum += seconds
        if status == 504:
            series.timeouts += 1
        elif status == 429:
            series.throttled += 1

    def _code_cell(self, labels: tuple[str, str], code: str) -> list[Any]:
        cell = self._codes.get((labels, code))
        if cell is None:
            cell = self._codes[(labels, code)] = [0, time.time()]
        return cell

    def record_cold_start(self, namespace: str, name: str, seconds: float) -> None:
        """A call waited ``seconds`` for a worker (or a pod) started for it."""
        self.cold_start_seconds.labels(*self.series_labels(namespace, name)).observe(seconds)

    # -- the platform ------------------------------------------------------------------

    def record_validation(self, report: Report, *, cached: bool) -> None:
        """An upload's verdict (``stage="final"``: every upload, cached reports included)
        and, for a report made now, each stage's verdict and duration."""
        self.verdicts.labels("final", report.verdict.value).inc()
        if cached:
            return
        for stage in report.stages:
            self.verdicts.labels(stage.name, stage.verdict.value).inc()
            self.validation_seconds.labels(stage.name).observe(stage.duration_ms / 1000)

    def set_instances(self, counts: dict[tuple[str, str], tuple[int, int, int]]) -> None:
        """``(namespace, name) → (workers, started, in flight)`` from the backend, at scrape."""
        for gauge in (self.replicas, self.cold_starts, self.inflight):
            gauge.clear()
        for (namespace, name), (workers, started, inflight) in counts.items():
            labels = self.series_labels(namespace, name)
            self.replicas.labels(*labels).inc(workers)
            self.cold_starts.labels(*labels).inc(started)
            self.inflight.labels(*labels).inc(inflight)

    def set_consumer_lag(self, lags: dict[tuple[str, str, str], int]) -> None:
        """``(namespace, trigger, function) → messages waiting`` of the running consumers,
        at scrape. Bounded like the function series: past ``max_per_namespace`` triggers
        of one namespace the rest add up under ``trigger="_other"``."""
        self.consumer_lag.clear()
        per_namespace: dict[str, int] = {}
        for (namespace, trigger, function), lag in sorted(lags.items()):
            seen = per_namespace[namespace] = per_namespace.get(namespace, 0) + 1
            if seen > self.max_per_namespace:
                trigger, function = OTHER, OTHER
            self.consumer_lag.labels(namespace, trigger, function).inc(lag)

    def series_labels(self, namespace: str, name: str) -> tuple[str, str]:
        series = self.series(namespace, name)
        return series.labels

    # -- exposition --------------------------------------------------------------------

    def text(self) -> bytes:
        return generate_latest(self.registry)

    def of_namespace(self, namespace: str) -> list[Metric]:
        """The function metrics whose ``namespace`` label is ``namespace``."""
        found = []
        for metric in self.registry.collect():
            samples = [s for s in metric.samples if s.labels.get("namespace") == namespace]
            if samples:
                copy = Metric(metric.name, metric.documentation, metric.type, metric.unit)
                copy.samples = samples
                found.append(copy)
        return found


def render_text(metrics: Iterable[Metric]) -> bytes:
    """Prometheus text exposition of ``metrics`` (what ``generate_latest`` does for a registry)."""

    class _Only:
        def collect(self) -> Iterable[Metric]:
            return metrics

    return generate_latest(_Only())


def as_json(metrics: Iterable[Metric]) -> dict[str, Any]:
    """``{function: {metric: value | {label: value}}}`` for a tenant's view."""
    functions: dict[str, dict[str, Any]] = {}
    for metric in metrics:
        for sample in metric.samples:
            name = sample.labels.get("function_name")
            if name is None or sample.name.endswith("_created"):
                continue
            entry = functions.setdefault(name, {})
            extra = {
                k: v for k, v in sample.labels.items() if k not in ("namespace", "function_name")
            }
            if not extra:
                entry[sample.name] = sample.value
            else:
                key = ",".join(f"{k}={v}" for k, v in sorted(extra.items()))
                entry.setdefault(sample.name, {})[key] = sample.value
    return {"functions": functions}


class _RecorderCollector:
    """The invocation writer's figures (``sless.store.InvocationRecorder``) as counters: it
    counts them itself, so they are read at scrape time rather than mirrored."""

    def __init__(self, recorder: Any) -> None:
        self._recorder = recorder

    def describe(self) -> Iterable[Metric]:
        return []  # read at collect time only: no fixed description to check at register

    def collect(self) -> Iterable[Metric]:
        r = self._recorder
        yield CounterMetricFamily(
            "sless_invocation_records_written",
            "Invocation records written to PostgreSQL since start",
            value=r.written,
        )
        yield CounterMetricFamily(
            "sless_invocation_records_dropped",
            "Invocation records dropped (writer queue full) since start",
            value=r.dropped,
        )
        yield CounterMetricFamily(
            "sless_invocation_records_replayed",
            "Invocation records replayed from the write-ahead journal at start",
            value=r.replayed,
        )
        yield CounterMetricFamily(
            "sless_invocation_journal_errors",
            "Records that could not be appended to the write-ahead journal (disk full...)",
            value=r.journal_errors,
        )
        yield GaugeMetricFamily(
            "sless_invocation_records_buffered",
            "Invocation records waiting to be written",
            value=r.buffered,
        )
        yield SummaryMetricFamily(
            "sless_invocation_flush_seconds",
            "Batches of invocation records written, and the seconds from the first attempt"
            " to the database's answer (retries while it was away included)",
            count_value=r.flushes,
            sum_value=r.flush_seconds,
        )


class _BuildCollector:
    """Builds this process ran (embedded mode: dependencies installed per version), by
    runtime and result, as a summary: count and seconds in all."""

    def __init__(self, durations: Callable[[], dict[tuple[str, str], tuple[int, float]]]) -> None:
        self._durations = durations

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        family = SummaryMetricFamily(
            "sless_build_duration_seconds",
            "Builds run by this process and their seconds in all, by runtime and result",
            labels=("runtime", "result"),
        )
        for (runtime, result), (count, seconds) in sorted(self._durations().items()):
            family.add_metric((runtime, result), count_value=count, sum_value=seconds)
        yield family


class _EgressCollector:
    """Connections the egress proxies hold per namespace, and those refused at a cap
    (``sless.sandbox.tunnels``). Namespaces are tenants: bounded."""

    def __init__(self, connections: Callable[[], dict[str, tuple[int, int]]]) -> None:
        self._connections = connections

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterable[Metric]:
        held = GaugeMetricFamily(
            "sless_egress_tunnels",
            "Connections a namespace's functions hold open through the egress proxy",
            labels=("namespace",),
        )
        refused = CounterMetricFamily(
            "sless_egress_tunnels_refused",
            "Egress proxy connections refused at the namespace's or a function's cap",
            labels=("namespace",),
        )
        for namespace, (now, count) in self._connections().items():
            held.add_metric((namespace,), now)
            refused.add_metric((namespace,), count)
        yield held
        yield refused

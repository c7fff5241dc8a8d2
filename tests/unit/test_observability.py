"""deploy/observability/: the alert rules pass ``promtool check rules`` (promtool built from
the Go module proxy, scripts/promtool), and every metric the rules and the dashboard name
is one the gateway exports."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from sless.gateway.metrics import GatewayMetrics
from sless.store import InvocationRecorder

ROOT = Path(__file__).resolve().parents[2]
OBSERVABILITY = ROOT / "deploy" / "observability"
_OUR_METRIC = re.compile(r"\b((?:gateway|sless)_[a-z0-9_]+)")


def exported_names() -> set[str]:
    metrics = GatewayMetrics(max_functions_per_namespace=1)
    metrics.record("sless-acme", "f", 200, 0.1)
    # the writer's figures are read from it at scrape time: a real one, never started (its
    # counters exist from construction; no database is touched)
    metrics.watch_recorder(InvocationRecorder(None))  # type: ignore[arg-type]
    names = set()
    for family in metrics.registry.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "counter":
            names.add(family.name + "_total")
        if family.type == "histogram":
            names.update(family.name + s for s in ("_bucket", "_sum", "_count"))
    return names


def expressions() -> list[str]:
    rules = yaml.safe_load((OBSERVABILITY / "alerts.yaml").read_text())
    found = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    dashboard = json.loads((OBSERVABILITY / "grafana-dashboard.json").read_text())
    found += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    return found


def test_rules_have_the_shape_prometheus_loads() -> None:
    rules = yaml.safe_load((OBSERVABILITY / "alerts.yaml").read_text())
    names = [rule["alert"] for group in rules["groups"] for rule in group["rules"]]
    assert len(names) == len(set(names)) >= 8
    for group in rules["groups"]:
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}
            assert rule["labels"]["severity"] in ("critical", "warning", "info")
            assert rule["annotations"]["summary"]


def test_every_metric_named_is_exported_by_the_gateway() -> None:
    exported = exported_names()
    named = {m for expr in expressions() for m in _OUR_METRIC.findall(expr)}
    assert named, "no metric found in the rules and the dashboard"
    assert named - exported == set()


@pytest.mark.timeout(3600)  # the first run builds promtool (cached afterwards)
def test_promtool_accepts_the_alert_rules() -> None:
    result = subprocess.run(
        [str(ROOT / "scripts" / "promtool"), "check", "rules", str(OBSERVABILITY / "alerts.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout

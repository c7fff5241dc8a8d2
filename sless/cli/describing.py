"""``sless describe NAME``: one function on one screen, from the API a program uses.

The spec, the status and the last validation verdict (``GET .../functions/NAME``), the
versions and their traffic (``.../versions``), the triggers that call it (``triggers``),
its instances (the tenant's ``metrics``), and the last hour's invocations: count, errors,
p50 and p99 of their durations (``invocations?function=&since=``, every page).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import click

from sless.cli.client import Client

#: the tenant metric that counts a function's instances (workers or replicas)
_INSTANCES = "gateway_service_count"
#: the most invocations read for the last hour's figures (10 pages)
_MAX_INVOCATIONS = 10_000


def describe(client: Client, name: str, *, as_json: bool) -> None:
    function = client.call("GET", client.ns_path(f"functions/{name}"))
    versions = client.call(
        "GET", client.ns_path(f"functions/{name}/versions"), params={"limit": 5}
    )["versions"]
    triggers = [
        t
        for t in client.list_all(client.ns_path("triggers"), "triggers")
        if t.get("spec", t).get("function") == name
    ]
    metrics = client.call("GET", client.ns_path("metrics")).get("functions", {}).get(name, {})
    hour = _last_hour(client, name)
    if as_json:
        view = {
            "function": function,
            "versions": versions,
            "triggers": triggers,
            "instances": metrics.get(_INSTANCES),
            "last_hour": hour,
        }
        click.echo(json.dumps(view, indent=2))
        return
    _print(function, versions, triggers, metrics.get(_INSTANCES), hour)


def _last_hour(client: Client, name: str) -> dict[str, Any]:
    since = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    durations: list[float] = []
    errors = 0
    for page in client.pages(
        client.ns_path("invocations"),
        "invocations",
        {"function": name, "since": since, "limit": 1000},
    ):
        for row in page:
            durations.append(float(row["duration_ms"]))
            errors += int(row["status"]) >= 500
        if len(durations) >= _MAX_INVOCATIONS:
            break
    durations.sort()
    return {
        "invocations": len(durations),
        "errors_5xx": errors,
        "p50_ms": _percentile(durations, 0.50),
        "p99_ms": _percentile(durations, 0.99),
        "capped": len(durations) >= _MAX_INVOCATIONS,
    }


def _percentile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _print(
    function: dict[str, Any],
    versions: list[dict[str, Any]],
    triggers: list[dict[str, Any]],
    instances: Any,
    hour: dict[str, Any],
) -> None:
    spec, status = function["spec"], function["status"]
    validation = status.get("validation") or {}
    out = [
        f"Name:        {function['name']}",
        f"URL:         {function.get('url', '')}",
        f"Phase:       {status['phase']}"
        + (f" ({status['message']})" if status.get("message") else ""),
        f"Serving:     {status.get('version') or '-'}",
        f"Validation:  {validation.get('verdict') or '-'}",
        f"Runtime:     {spec['runtime']} ({spec['entrypoint']}), {spec['memory_mb']} MiB,"
        f" timeout {spec['timeout_s']} s, auth {spec['auth']}",
        f"Scaling:     concurrency {spec['concurrency']}, instances"
        f" {spec['min_instances']}..{spec['max_instances']}, running {_instances(instances)}",
        f"Egress:      {', '.join(spec.get('egress') or []) or 'none'}",
        f"Env:         {', '.join(sorted(spec.get('env') or {})) or 'none'}",
        f"Secrets:     {', '.join(f'{r[0]}→{r[1]}' for r in _secrets(spec)) or 'none'}",
        "Versions:",
    ]
    for v in versions:
        mark = "*" if v.get("current") else " "
        share = f"{v.get('percent', 0)}%"
        out.append(f"  {v['version'] + mark:<6} {share:>5}  {v['state']:<9} {v['sha256'][:12]}")
    out.append("Triggers:" + ("" if triggers else "    none"))
    for t in triggers:
        t_spec = t.get("spec", t)
        what = t_spec.get("schedule") or t_spec.get("queue") or t_spec.get("exchange") or ""
        out.append(f"  {t['name']:<24} {t_spec['type']:<9} {what}")
    p50, p99 = hour["p50_ms"], hour["p99_ms"]
    out.append(
        f"Last hour:   {hour['invocations']}{'+' if hour['capped'] else ''} invocations,"
        f" {hour['errors_5xx']} 5xx"
        + (f", p50 {p50:.1f} ms, p99 {p99:.1f} ms" if p50 is not None and p99 is not None else "")
    )
    click.echo("\n".join(out))


def _instances(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v:g}" for k, v in value.items()) or "0"
    return f"{value:g}" if isinstance(value, (int, float)) else "0"


def _secrets(spec: dict[str, Any]) -> list[tuple[str, str]]:
    return [(ref["name"], ref["env"]) for ref in spec.get("secrets") or []]

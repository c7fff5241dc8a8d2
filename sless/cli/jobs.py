"""``sless job``: run-once jobs (one run per new run_id)."""

from __future__ import annotations

import time
from typing import Any

import click

from sless.cli.client import make_client
from sless.cli.options import Group, json_value, token_option, url_option

_JOB_DONE = {"Succeeded", "Failed", "Idle"}


@click.group(cls=Group)
def job() -> None:
    """Run a function once per run id, and read the result."""


def _print_job(data: dict[str, Any]) -> None:
    status = data["status"]
    click.echo(f"job {data['name']} (function {data['spec']['function']})")
    click.echo(f"phase: {status['phase']}")
    click.echo(f"run_id: {status.get('run_id') or 0} (asked: {data['spec']['run_id']})")
    for key in ("invocation_id", "started_at", "completed_at", "error", "message"):
        if status.get(key):
            click.echo(f"{key}: {status[key]}")
    if status.get("result") is not None:
        click.echo(f"result: {status['result']}")


@job.command("run")
@click.argument("name")
@click.option("--function", "-f", help="the function (default: the job's)")
@click.option("--run-id", type=int, help="default: one more than the job's")
@click.option("--payload", "-d", help="JSON body of the call")
@click.option("--wait/--no-wait", default=True, show_default=True, help="wait for the result")
@click.option("--wait-timeout", default=600.0, show_default=True)
@url_option
@token_option
def job_run(
    name: str,
    function: str | None,
    run_id: int | None,
    payload: str | None,
    wait: bool,
    wait_timeout: float,
    url: str | None,
    token: str | None,
) -> None:
    """Start a new run of job NAME (creating it with --function)."""
    client = make_client(url, token)
    path = client.ns_path(f"jobs/{name}")
    response = client.request("GET", path)
    current = response.json() if response.status_code == 200 else None
    if function is None:
        if current is None:
            raise click.ClickException(f"job {name} does not exist: pass --function")
        function = str(current["spec"]["function"])
    if run_id is None:
        run_id = (int(current["spec"]["run_id"]) if current else 0) + 1
    body: dict[str, Any] = {"function": function, "run_id": run_id}
    if payload is not None:
        body["payload"] = json_value(payload, "--payload")
    elif current is not None:
        body["payload"] = current["spec"].get("payload")
    client.call("PUT", path, json=body)
    click.echo(f"job {name}: run {run_id} requested", err=True)
    if not wait:
        return
    deadline = time.monotonic() + wait_timeout
    while True:
        data = client.call("GET", path)
        status = data["status"]
        if status.get("run_id") == run_id and status["phase"] in _JOB_DONE:
            _print_job(data)
            if status["phase"] == "Failed":
                raise SystemExit(1)
            return
        if time.monotonic() > deadline:
            raise click.ClickException(f"run {run_id} is still {status['phase']}")
        time.sleep(0.3)


@job.command("status")
@click.argument("name")
@click.option("--logs", is_flag=True, help="also print the function's recent output")
@url_option
@token_option
def job_status(name: str, logs: bool, url: str | None, token: str | None) -> None:
    """Show the last run of job NAME: phase, result, error."""
    client = make_client(url, token)
    _print_job(client.call("GET", client.ns_path(f"jobs/{name}")))
    if logs:
        click.echo("--- logs ---")
        click.echo(client.call("GET", client.ns_path(f"jobs/{name}/logs")), nl=False)


@job.command("rm")
@click.argument("name")
@url_option
@token_option
def job_rm(name: str, url: str | None, token: str | None) -> None:
    """Delete job NAME."""
    client = make_client(url, token)
    client.call("DELETE", client.ns_path(f"jobs/{name}"))
    click.echo(f"deleted job {name}")

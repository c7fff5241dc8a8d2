"""``sless trigger`` and ``sless job``: cron/http triggers and run-once jobs."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import click

from sless.cli.client import make_client

url_option = click.option(
    "--url", envvar="SLESS_URL", help="gateway URL (default: from sless login)"
)
token_option = click.option("--token", help="tenant token (default: SLESS_TOKEN or sless login)")
_JOB_DONE = {"Succeeded", "Failed", "Idle"}


def _json_option(value: str | None, what: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError as e:
        raise click.ClickException(f"{what} is not valid JSON: {e}") from None


@click.group()
def trigger() -> None:
    """Create, list and remove triggers (cron schedules, http, rabbitmq)."""


@trigger.command("put")
@click.argument("name")
@click.option("--type", "kind", type=click.Choice(["cron", "http", "rabbitmq"]), default="cron")
@click.option("--function", "-f", required=True, help="the function to invoke")
@click.option("--schedule", "-s", help="cron: five fields or @hourly, @daily...")
@click.option("--timezone", "tz", help="cron: IANA time zone (default UTC)")
@click.option("--payload", "-d", help="cron: JSON body of each call")
@click.option("--prewarm", "prewarm_s", type=float, help="cron: start the function N s early")
@click.option("--url-secret", help="rabbitmq: the secret holding the amqp(s):// URL")
@click.option("--queue", help="rabbitmq: consume this queue")
@click.option("--exchange", help="rabbitmq: bind a queue to this exchange instead")
@click.option("--routing-key", help="rabbitmq: the binding's routing key (with --exchange)")
@click.option("--prefetch", type=int, help="rabbitmq: messages in flight (default 10)")
@click.option("--max-attempts", type=int, help="rabbitmq: tries before dead-lettering")
@click.option("--disabled", is_flag=True, help="create or update it disabled")
@url_option
@token_option
def trigger_put(
    name: str,
    kind: str,
    function: str,
    schedule: str | None,
    tz: str | None,
    payload: str | None,
    prewarm_s: float | None,
    url_secret: str | None,
    queue: str | None,
    exchange: str | None,
    routing_key: str | None,
    prefetch: int | None,
    max_attempts: int | None,
    disabled: bool,
    url: str | None,
    token: str | None,
) -> None:
    """Create or replace trigger NAME.

    \b
    sless trigger put nightly -f report -s "0 3 * * *" -d '{"full": true}'
    sless trigger put orders --type rabbitmq -f ingest --url-secret broker --queue orders
    """
    client = make_client(url, token)
    body: dict[str, Any] = {"type": kind, "function": function, "enabled": not disabled}
    fields: dict[str, Any] = {
        "schedule": schedule,
        "timezone": tz,
        "prewarm_s": prewarm_s,
        "url_secret": url_secret,
        "queue": queue,
        "exchange": exchange,
        "routing_key": routing_key,
        "prefetch": prefetch,
        "max_attempts": max_attempts,
    }
    for key, value in fields.items():
        if value is not None:
            body[key] = value
    if payload is not None:
        body["payload"] = _json_option(payload, "--payload")
    data = client.call("PUT", client.ns_path(f"triggers/{name}"), json=body)
    status = data["status"]
    click.echo(f"trigger {name}: {status['phase']}; next tick {status.get('next_tick') or '-'}")


@trigger.command("ls")
@url_option
@token_option
def trigger_ls(url: str | None, token: str | None) -> None:
    """List your triggers."""
    client = make_client(url, token)
    data = client.call("GET", client.ns_path("triggers"))
    if not data["triggers"]:
        click.echo("no triggers")
        return
    click.echo(f"{'NAME':<24} {'TYPE':<9} {'FUNCTION':<24} {'PHASE':<10} SCHEDULE")
    for t in data["triggers"]:
        spec = t["spec"]
        click.echo(
            f"{t['name']:<24} {spec['type']:<9} {spec['function']:<24}"
            f" {t['status']['phase']:<10} {spec.get('schedule') or ''}"
        )


@trigger.command("rm")
@click.argument("name")
@url_option
@token_option
def trigger_rm(name: str, url: str | None, token: str | None) -> None:
    """Delete trigger NAME."""
    client = make_client(url, token)
    client.call("DELETE", client.ns_path(f"triggers/{name}"))
    click.echo(f"deleted trigger {name}")


@click.group()
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
        body["payload"] = _json_option(payload, "--payload")
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


@click.command("invocation")
@click.argument("invocation_id")
@url_option
@token_option
def invocation(invocation_id: str, url: str | None, token: str | None) -> None:
    """Show one invocation: state, status, attempts and result of an async call."""
    client = make_client(url, token)
    click.echo(
        json.dumps(client.call("GET", client.ns_path(f"invocations/{invocation_id}")), indent=2)
    )


@click.group()
def secret() -> None:
    """Store write-only secrets (broker URLs, callback signing keys)."""


@secret.command("put")
@click.argument("name")
@click.option(
    "--from-stdin", is_flag=True, help="read the value from standard input (else: a prompt)"
)
@url_option
@token_option
def secret_put(name: str, from_stdin: bool, url: str | None, token: str | None) -> None:
    """Store secret NAME; the value is never printed and never returned by the API."""
    value: str
    if from_stdin:
        value = sys.stdin.read().rstrip("\n")
    else:
        value = str(click.prompt("value", hide_input=True, confirmation_prompt=True))
    if not value:
        raise click.ClickException("the value is empty")
    client = make_client(url, token)
    client.call("PUT", client.ns_path(f"secrets/{name}"), json={"value": value})
    click.echo(f"secret {name} stored")


@secret.command("ls")
@url_option
@token_option
def secret_ls(url: str | None, token: str | None) -> None:
    """List your secrets' names (values are never shown)."""
    client = make_client(url, token)
    data = client.call("GET", client.ns_path("secrets"))
    for item in data["secrets"]:
        click.echo(f"{item['name']:<32} {item.get('updated_at') or ''}")
    if not data["secrets"]:
        click.echo("no secrets")


@secret.command("rm")
@click.argument("name")
@url_option
@token_option
def secret_rm(name: str, url: str | None, token: str | None) -> None:
    """Delete secret NAME."""
    client = make_client(url, token)
    client.call("DELETE", client.ns_path(f"secrets/{name}"))
    click.echo(f"secret {name} deleted")


COMMANDS = [trigger, job, invocation, secret]

"""``sless trigger``: cron, http and rabbitmq triggers."""

from __future__ import annotations

from typing import Any

import click

from sless.cli.client import make_client
from sless.cli.options import Group, json_value, token_option, url_option


@click.group(cls=Group)
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
        body["payload"] = json_value(payload, "--payload")
    data = client.call("PUT", client.ns_path(f"triggers/{name}"), json=body)
    status = data["status"]
    click.echo(f"trigger {name}: {status['phase']}; next tick {status.get('next_tick') or '-'}")


@trigger.command("ls")
@url_option
@token_option
def trigger_ls(url: str | None, token: str | None) -> None:
    """List your triggers."""
    client = make_client(url, token)
    items = client.list_all(client.ns_path("triggers"), "triggers")
    if not items:
        click.echo("no triggers")
        return
    click.echo(f"{'NAME':<24} {'TYPE':<9} {'FUNCTION':<24} {'PHASE':<10} SCHEDULE")
    for t in items:
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

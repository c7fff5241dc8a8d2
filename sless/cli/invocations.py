"""``sless invocations`` (the history, every page with ``--all``) and ``sless invocation``."""

from __future__ import annotations

import json
from typing import Any

import click

from sless.cli.client import make_client
from sless.cli.options import json_option, token_option, url_option


@click.command()
@click.option("--function", "-f", "function", help="only this function")
@click.option("--since", help="only calls started at or after this ISO 8601 time")
@click.option("--until", help="only calls started before this ISO 8601 time")
@click.option(
    "--status",
    type=click.Choice(["2xx", "3xx", "4xx", "5xx"]),
    help="only answers of this status class",
)
@click.option(
    "--state",
    type=click.Choice(["queued", "running", "succeeded", "failed", "dead", "interrupted"]),
    help="only async calls in this state",
)
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="how many (the page size with --all)",
)
@click.option("--all", "every", is_flag=True, help="every matching call: follow the cursor")
@json_option
@url_option
@token_option
def invocations(
    function: str | None,
    since: str | None,
    until: str | None,
    status: str | None,
    state: str | None,
    limit: int,
    every: bool,
    as_json: bool,
    url: str | None,
    token: str | None,
) -> None:
    """List invocations, newest first."""
    client = make_client(url, token)
    params: dict[str, Any] = {
        "limit": limit,
        "function": function,
        "since": since,
        "until": until,
        "status": status,
        "state": state,
    }
    path = client.ns_path("invocations")
    pages = client.pages(path, "invocations", params)
    if not every:
        pages = iter([next(pages)])
    if as_json:
        rows = [row for page in pages for row in page]
        click.echo(json.dumps({"invocations": rows, "count": len(rows)}, indent=2, default=str))
        return
    click.echo(f"{'STARTED':<27} {'FUNCTION':<24} {'STATUS':<6} {'MS':>8}  ID")
    for page in pages:  # printed as they come: --all streams
        for row in page:
            click.echo(
                f"{row['started_at'][:26]:<27} {row['function']:<24} {row['status']:<6}"
                f" {row['duration_ms']:>8.1f}  {row['id']}"
            )


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

"""``sless audit`` (a tenant's own log) and ``sless admin audit`` (the provider's view)."""

from __future__ import annotations

import json
from typing import Any

import click

from sless.cli.client import Client, make_admin_client, make_client
from sless.cli.options import json_option, url_option

limit_option = click.option(
    "--limit", default=50, show_default=True, type=click.IntRange(1, 1000), help="rows"
)
action_option = click.option("--action", "-a", help="only this action (function.put, ...)")
since_option = click.option("--since", help="only rows at or after this ISO 8601 time")
before_option = click.option("--before", type=int, help="only rows older than this id (paging)")


def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, default=str))
        return
    rows = data["entries"]
    if not rows:
        click.echo("no entries")
        return
    click.echo(
        f"{'ID':>7} {'AT':<26} {'ACTOR':<22} {'ACTION':<18} {'TARGET':<36} {'STATUS':<6} OUTCOME"
    )
    for row in rows:
        actor = row["tenant"] or row["actor_kind"]
        target = "/".join(p for p in (row["target_namespace"], row["target_name"]) if p)
        click.echo(
            f"{row['id']:>7} {row['at'][:26]:<26} {actor[:22]:<22} {row['action'][:18]:<18}"
            f" {target[:36]:<36} {row['status']:<6} {row['outcome']}"
        )
    if data.get("next_before"):
        click.echo(f"(older entries: --before {data['next_before']}, or --all)", err=True)


def _fetch(client: Client, path: str, params: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = client.call(
        "GET", path, params={k: v for k, v in params.items() if v is not None}
    )
    return data


@click.command("audit")
@action_option
@since_option
@before_option
@limit_option
@json_option
@url_option
@click.option("--token", help="tenant token (default: SLESS_TOKEN or sless login)")
def audit(
    action: str | None,
    since: str | None,
    before: int | None,
    limit: int,
    as_json: bool,
    url: str | None,
    token: str | None,
) -> None:
    """Show the audit log of your namespace, newest first: who changed what, and how it ended."""
    client = make_client(url, token)
    params = {"action": action, "since": since, "before": before, "limit": limit}
    _print(_fetch(client, client.ns_path("audit"), params), as_json)


@click.command("audit")
@click.option("--namespace", "-n", help="rows in or about this namespace")
@click.option("--tenant", "-t", help="rows by this tenant")
@action_option
@since_option
@before_option
@limit_option
@json_option
@url_option
@click.option("--admin-token", help="provider admin token (SLESS_ADMIN_TOKEN)")
def admin_audit(
    namespace: str | None,
    tenant: str | None,
    action: str | None,
    since: str | None,
    before: int | None,
    limit: int,
    as_json: bool,
    url: str | None,
    admin_token: str | None,
) -> None:
    """Show the whole audit log (every tenant, the admin, refused anonymous attempts)."""
    client = make_admin_client(url, admin_token)
    params = {
        "namespace": namespace,
        "tenant": tenant,
        "action": action,
        "since": since,
        "before": before,
        "limit": limit,
    }
    _print(_fetch(client, "/v1/admin/audit", params), as_json)

"""``sless secret``: write-only tenant secrets."""

from __future__ import annotations

import sys

import click

from sless.cli.client import make_client
from sless.cli.options import Group, token_option, url_option


@click.group(cls=Group)
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
    items = client.list_all(client.ns_path("secrets"), "secrets")
    for item in items:
        click.echo(f"{item['name']:<32} {item.get('updated_at') or ''}")
    if not items:
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

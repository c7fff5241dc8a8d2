"""``sless admin tenant``: the provider onboards tenants and mints their tokens."""

from __future__ import annotations

import click

from sless.cli.client import make_admin_client
from sless.cli.options import Group, url_option


@click.group(cls=Group)
def admin() -> None:
    """Provider administration (needs SLESS_ADMIN_TOKEN)."""


@admin.group()
def tenant() -> None:
    """Onboard, list and delete tenants."""


admin_token_option = click.option("--admin-token", help="provider admin token (SLESS_ADMIN_TOKEN)")


@tenant.command("create")
@click.argument("name")
@url_option
@admin_token_option
def tenant_create(name: str, url: str | None, admin_token: str | None) -> None:
    """Create tenant NAME and print its first token (shown once)."""
    data = make_admin_client(url, admin_token).call(
        "POST", "/v1/admin/tenants", json={"name": name}
    )
    click.echo(f"tenant: {data['tenant']}\nnamespace: {data['namespace']}\ntoken: {data['token']}")


@tenant.command("list")
@url_option
@admin_token_option
def tenant_list(url: str | None, admin_token: str | None) -> None:
    """List tenants."""
    client = make_admin_client(url, admin_token)
    for t in client.list_all("/v1/admin/tenants", "tenants"):
        click.echo(f"{t['tenant']:<30} {t['namespace']}")


@tenant.command("delete")
@click.argument("name")
@url_option
@admin_token_option
def tenant_delete(name: str, url: str | None, admin_token: str | None) -> None:
    """Delete tenant NAME with all its functions and tokens."""
    make_admin_client(url, admin_token).call("DELETE", f"/v1/admin/tenants/{name}")
    click.echo(f"deleted tenant {name}")


@tenant.command("token")
@click.argument("name")
@click.option("--description", default="", help="what the token is for")
@url_option
@admin_token_option
def tenant_token(name: str, description: str, url: str | None, admin_token: str | None) -> None:
    """Mint another token for tenant NAME (shown once)."""
    data = make_admin_client(url, admin_token).call(
        "POST", f"/v1/admin/tenants/{name}/tokens", json={"description": description}
    )
    click.echo(f"token id: {data['id']}\ntoken: {data['token']}")

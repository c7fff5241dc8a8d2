"""Options and small helpers every ``sless`` command module shares."""

from __future__ import annotations

import json
from typing import Any

import click

url_option = click.option(
    "--url", envvar="SLESS_URL", help="gateway URL (default: from sless login)"
)
token_option = click.option("--token", help="tenant token (default: SLESS_TOKEN or sless login)")
json_option = click.option("--json", "as_json", is_flag=True, help="print JSON")


def json_value(value: str | None, what: str) -> Any:
    """An option's value parsed as JSON (None stays None); a clear error otherwise."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError as e:
        raise click.ClickException(f"{what} is not valid JSON: {e}") from None

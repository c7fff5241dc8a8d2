"""Options and small helpers every ``sless`` command module shares."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    # imported where used: pydantic and the settings are a third of a second of a start,
    # and the client-side commands never read them (bench/cli_start.py)
    from sless.config import Settings

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


def load_settings() -> Settings:
    """The SLESS_* settings, or a one-line error per bad variable (never its value)."""
    from pydantic import ValidationError

    from sless.config import Settings

    try:
        return Settings()
    except ValidationError as e:
        lines = []
        for error in e.errors(include_input=False, include_url=False):
            variable = "SLESS_" + "_".join(str(part) for part in error["loc"]).upper()
            lines.append(f"{variable} {error['msg'].removeprefix('Value error, ')}")
        raise click.ClickException("\n".join(lines)) from None

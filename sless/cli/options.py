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


#: names that mean the same command in every group: a user who types one gets the other
_SYNONYMS = [{"ls", "list"}, {"rm", "delete", "remove"}]


class Group(click.Group):
    """A command group where ``ls``/``list`` and ``rm``/``delete``/``remove`` are one name."""

    group_class = type  # subgroups made with ``@group.group()`` are ``Group`` too

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        for names in _SYNONYMS:
            if cmd_name in names:
                for other in sorted(names - {cmd_name}):
                    command = super().get_command(ctx, other)
                    if command is not None:
                        return command
        return None

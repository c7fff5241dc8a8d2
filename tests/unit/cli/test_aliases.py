"""``ls``/``list`` and ``rm``/``delete``/``remove`` are accepted in every group (issue 31:
``sless admin tenant ls`` and ``sless trigger list`` were refused)."""

from __future__ import annotations

from collections.abc import Iterator

import click
from click.testing import CliRunner

from sless.cli import main

SYNONYMS = [{"ls", "list"}, {"rm", "delete", "remove"}]


def _groups(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Group]]:
    yield path, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _groups(command, (*path, name))


def test_every_list_and_delete_answers_to_each_name() -> None:
    checked = 0
    for path, group in _groups(main):
        ctx = click.Context(group)
        for name, command in group.commands.items():
            for names in SYNONYMS:
                if name in names:
                    for other in names:
                        assert group.get_command(ctx, other) is command, (path, other)
                        checked += 1
    assert checked >= 15  # ls/rm of functions, triggers, secrets, jobs; tenant list/delete


def test_the_reported_spellings_run() -> None:
    runner = CliRunner()
    for args in (["admin", "tenant", "ls", "--help"], ["trigger", "list", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
        assert "Usage:" in result.output

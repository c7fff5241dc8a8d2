"""``sless.yaml``: checked with the API's own models, errors as ``sless.yaml:LINE: field: why``."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from sless.cli.project import load, merge


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "sless.yaml").write_text(text)
    return tmp_path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(click.ClickException) as caught:
        load(_write(tmp_path, text))
    return caught.value.message


def test_a_valid_file_gives_the_spec_and_triggers(tmp_path: Path) -> None:
    project = load(
        _write(
            tmp_path,
            "name: hello\nruntime: nodejs20\nmemory_mb: 256\nenv: {A: b}\n"
            "triggers:\n  - name: nightly\n    type: cron\n    schedule: '0 3 * * *'\n",
        )
    )
    assert project is not None
    assert project.name == "hello"
    assert project.spec == {"runtime": "nodejs20", "memory_mb": 256, "env": {"A": "b"}}
    assert project.triggers == {"nightly": {"type": "cron", "schedule": "0 3 * * *"}}


def test_no_file_is_none(tmp_path: Path) -> None:
    assert load(tmp_path) is None


def test_errors_name_the_line_and_the_field(tmp_path: Path) -> None:
    message = _error(
        tmp_path,
        "# a comment\nname: hello\nruntime: python3.11\n\nenv:\n  A: b\nmemory_mb: 9000\n",
    )
    assert message == "sless.yaml:7: memory_mb: Input should be less than or equal to 4096"


def test_every_error_is_reported_with_its_own_line(tmp_path: Path) -> None:
    message = _error(
        tmp_path,
        "name: Bad_Name\nruntime: cobol\nmemroy_mb: 1\n"
        "triggers:\n  - name: t\n    type: cron\n    schedule: never\n",
    )
    lines = message.splitlines()
    assert lines[0].startswith("sless.yaml:1: name: must be a DNS-1123 label")
    assert lines[1].startswith("sless.yaml:2: runtime: Input should be 'python3.11' or 'nodejs20'")
    assert lines[2] == "sless.yaml:3: memroy_mb: Extra inputs are not permitted"
    assert lines[3].startswith("sless.yaml:5: triggers.0: schedule must be five cron fields")
    assert len(lines) == 4


def test_code_and_traffic_stay_out_of_the_file(tmp_path: Path) -> None:
    message = _error(tmp_path, "traffic: []\n")
    assert message.startswith("sless.yaml:1: traffic: is not set in sless.yaml")


def test_yaml_syntax_errors_have_a_line(tmp_path: Path) -> None:
    assert _error(tmp_path, "name: a\nenv: {A: [\n").startswith("sless.yaml:3: not valid YAML")


def test_flags_override_the_file(tmp_path: Path) -> None:
    project = load(_write(tmp_path, "memory_mb: 256\nauth: token\n"))
    assert merge(project, {"memory_mb": 512, "auth": None}) == {"memory_mb": 512, "auth": "token"}

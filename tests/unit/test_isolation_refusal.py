"""Attack on the operator's intent: gVisor asked, bubblewrap (the weaker boundary) used.
``sless up`` refuses to start, in one line, when gVisor is asked and no usable runsc
exists; it never falls back."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sless.cli import main


def _refused(result_output: str) -> str:
    lines = [line for line in result_output.splitlines() if line.strip()]
    assert len(lines) == 1, result_output
    return lines[0]


@pytest.mark.parametrize(
    ("runsc", "said"),
    [
        ("/nonexistent/runsc", "not found"),
        # exists and runs, but starts no sandbox
        ("/bin/false", "cannot start a sandbox"),
    ],
)
def test_up_with_gvisor_and_no_usable_runsc_refuses_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, runsc: str, said: str
) -> None:
    monkeypatch.setenv("SLESS_SANDBOX_RUNSC", runsc)
    monkeypatch.setenv("SLESS_SANDBOX_RUNSC_PLATFORM", "systrap")
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["up", "--isolation", "gvisor", "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    line = _refused(result.output)
    assert line.startswith("Error: --isolation gvisor: "), line
    assert said in line
    assert not data.exists()  # nothing started


def test_the_environment_setting_refuses_the_same_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SLESS_EMBEDDED_ISOLATION", "gvisor")
    monkeypatch.setenv("SLESS_SANDBOX_RUNSC", "/nonexistent/runsc")
    result = CliRunner().invoke(main, ["up", "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1, result.output
    assert _refused(result.output).startswith("Error: --isolation gvisor: ")


def test_gvisor_and_no_sandbox_together_are_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["up", "--isolation", "gvisor", "--unsafe-no-sandbox", "--data-dir", str(tmp_path / "d")],
    )
    assert result.exit_code == 1, result.output
    assert "contradict" in _refused(result.output)

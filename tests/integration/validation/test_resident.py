"""The resident semgrep finds what the one-shot scan finds, or hands the scan back.

Every file of every sample of both labelled splits (tests/validation/corpus, heldback) is
scanned alone by the resident ``semgrep lsp`` and compared with the one-shot
``osemgrep scan`` of the same sample: same rule, line, severity and message for every
finding. A scan the resident semgrep declines (None) is fine, the one-shot scan then runs;
a different answer is not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sless.config import LLMSettings, ValidationSettings
from sless.validation.report import Finding, Verdict
from sless.validation.resident import SUFFIXES, ResidentSemgrep
from sless.validation.semgrep import run_semgrep
from sless.validation.static import list_files

pytestmark = pytest.mark.integration

SPLITS = Path(__file__).resolve().parents[2] / "validation"


def _key(f: Finding) -> tuple[str, str | None, int | None, str, str]:
    return (f.rule, f.file, f.line, f.severity.value, f.message)


def _samples() -> list[Path]:
    found = []
    for split in ("corpus", "heldback"):
        for kind in ("malicious", "benign"):
            found += sorted(
                p for p in (SPLITS / split / kind).iterdir() if (p / "meta.json").is_file()
            )
    return found


@pytest.mark.timeout(1200)
async def test_resident_scans_equal_one_shot_scans_on_every_sample() -> None:
    settings = ValidationSettings()
    resident = ResidentSemgrep(settings)
    answered = declined = 0
    try:
        for sample in _samples():
            _root, files, _odd = list_files(sample)
            files = [f for f in files if f != "meta.json"]
            one_shot: dict[str, set[tuple[str, str | None, int | None, str, str]]] = {
                f: set() for f in files
            }
            for finding in await run_semgrep(sample, files, settings):
                if finding.rule == "static-scan-incomplete":
                    # the resident semgrep must decline these files (below)
                    one_shot.setdefault(finding.file or "", set()).add(("error",) * 5)  # type: ignore[arg-type]
                    continue
                one_shot[finding.file or ""].add(_key(finding))
            for rel in files:
                if Path(rel).suffix not in SUFFIXES:
                    continue
                found = await resident.scan({rel: sample / rel})
                if found is None:
                    declined += 1
                    continue
                answered += 1
                assert ("error",) * 5 not in one_shot[rel], (
                    f"{sample.name}/{rel}: semgrep reported an error, the resident scan none"
                )
                assert {_key(f) for f in found} == one_shot[rel], f"{sample.name}/{rel}"
    finally:
        await resident.close()
    print(json.dumps({"answered": answered, "declined": declined}))
    assert answered > 10 * declined, (
        f"the resident semgrep declined {declined} of {answered + declined}"
    )


async def test_a_file_semgrep_cannot_parse_is_handed_back(tmp_path: Path) -> None:
    """The server logs a parse error and answers with no finding: the scan is declined,
    and the static stage's one-shot scan reports the file as not fully analysed."""
    from sless.validation.pipeline import Validator

    broken = tmp_path / "handler.py"
    broken.write_text("def handle(event):\n    x = 'a' +\n")
    resident = ResidentSemgrep(ValidationSettings())
    try:
        assert await resident.scan({"handler.py": broken}) is None
        good = tmp_path / "good.py"
        good.write_text("def handle(event):\n    return 1\n")
        assert await resident.scan({"good.py": good}) == [], "the server works otherwise"
    finally:
        await resident.close()
    # through the pipeline: a re-upload of that one file still gets the review finding
    validator = Validator(ValidationSettings(), LLMSettings())
    try:
        (tmp_path / "handler.py").write_text("def handle(event):\n    return 1\n")
        args = {"sha256": "0" * 64, "runtime": "python3.11", "entrypoint": "handler.handle"}
        await validator.validate_directory(tmp_path, **args)
        (tmp_path / "lib.py").write_text("def f(:\n    x = 'a' +\n")
        report = await validator.validate_directory(tmp_path, **args)
    finally:
        await validator.close()
    rules = [f.rule for stage in report.stages for f in stage.findings]
    assert "static-scan-incomplete" in rules, rules
    assert report.verdict is not Verdict.ALLOW

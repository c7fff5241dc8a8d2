"""A remembered report is stale once the detonation that made it changed.

Reports are kept by the validator's fingerprint. A report made by an older harness (one
that, for instance, never called code importing a missing package) must not be served for
the same code after the harness changed, nor after the budget did.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sless.config import LLMSettings, ValidationSettings
from sless.sandbox import default_runtimes_dir
from sless.validation import detonation
from sless.validation.pipeline import Validator


def _fingerprint(**settings: object) -> str:
    return Validator(ValidationSettings(**settings), LLMSettings()).fingerprint  # type: ignore[arg-type]


def test_the_budget_is_part_of_the_fingerprint() -> None:
    assert _fingerprint(detonation_budget_s=1.0) != _fingerprint(detonation_budget_s=2.0)
    assert _fingerprint(detonation_enabled=False) != _fingerprint(detonation_enabled=True)


def test_a_changed_harness_changes_the_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtimes = tmp_path / "runtimes"
    shutil.copytree(default_runtimes_dir(), runtimes)
    monkeypatch.setattr(detonation, "default_runtimes_dir", lambda: runtimes)
    detonation.fingerprint.cache_clear()
    try:
        before = detonation.fingerprint()
        harness = runtimes / "nodejs20" / "detonate.js"
        harness.write_text(harness.read_text() + "\n// changed\n")
        detonation.fingerprint.cache_clear()
        assert detonation.fingerprint() != before
    finally:
        detonation.fingerprint.cache_clear()

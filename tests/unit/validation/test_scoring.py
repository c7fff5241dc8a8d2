"""The weak-signal score: thresholds pinned, each signal counted once per upload."""

from __future__ import annotations

from sless.validation import scoring
from sless.validation.report import Finding, Verdict, strictest
from sless.validation.scoring import REJECT_AT, REVIEW_AT, score


def _note(rule: str, line: int = 1) -> Finding:
    return Finding(rule=rule, message="m", file="h.py", line=line, source="static",
                   severity=Verdict.ALLOW)  # fmt: skip


def test_thresholds_are_pinned() -> None:
    # changing these changes what uploads pass: do it on purpose, with the evaluation
    assert (REVIEW_AT, REJECT_AT) == (3, 6)
    assert scoring.WEIGHTS == {}


def test_one_weak_signal_allows_with_a_note() -> None:
    findings = score([_note("py-raw-network")])
    assert [f.rule for f in findings] == ["py-raw-network"]
    assert strictest(findings) is Verdict.ALLOW


def test_several_weak_signals_are_held_for_review() -> None:
    findings = score([_note("py-raw-network"), _note("py-host-fingerprint"), _note("x")])
    combined = findings[-1]
    assert combined.rule == "combined-signals"
    assert combined.severity is Verdict.REVIEW
    assert "py-host-fingerprint" in combined.message
    assert strictest(findings) is Verdict.REVIEW


def test_many_weak_signals_are_rejected() -> None:
    findings = score([_note(f"signal-{i}") for i in range(REJECT_AT)])
    assert findings[-1].severity is Verdict.REJECT


def test_a_signal_counts_once_however_often_it_fires() -> None:
    findings = score([_note("high-entropy-literal", line) for line in range(1, 50)])
    assert strictest(findings) is Verdict.ALLOW
    assert len(findings) == 49


def test_strong_findings_are_not_signals() -> None:
    strong = Finding(rule="py-exec-decoded", message="m", source="static")
    findings = score([strong, _note("a"), _note("b")])
    assert [f.rule for f in findings] == ["py-exec-decoded", "a", "b"]
    assert strictest(findings) is Verdict.REJECT


def test_weights_change_the_total(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(scoring.WEIGHTS, "heavy", REVIEW_AT)
    assert score([_note("heavy")])[-1].severity is Verdict.REVIEW

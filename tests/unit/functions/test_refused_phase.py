"""What a refused upload does to a function's phase: the one decision
(``sless.functions.uploading.refused_phase``) the API, ``sless ls`` and the console show."""

from __future__ import annotations

from sless.functions.uploading import refused_phase
from sless.models import CodeRef, Function, FunctionSpec, FunctionStatus, Phase
from sless.validation import Finding, Report, Verdict


def _function(code: CodeRef | None) -> Function:
    spec, status = FunctionSpec(code=code), FunctionStatus(phase=Phase.PENDING)
    return Function(name="f", namespace="sless-acme", spec=spec, status=status)


def _finding(rule: str, message: str, severity: Verdict = Verdict.REJECT) -> Finding:
    return Finding(rule=rule, message=message, source="archive", severity=severity)


def _report(*findings: Finding) -> Report:
    return Report(sha256="0" * 64, runtime="python3.11", verdict="reject", findings=list(findings))


def test_a_function_with_no_code_reads_rejected_with_the_first_rejecting_finding() -> None:
    report = _report(
        _finding("odd-import", "imports ctypes", Verdict.REVIEW),
        _finding("archive-unsafe-path", "path escapes the archive: ../x"),
        _finding("archive-symlink", "symlink"),
    )
    assert refused_phase(_function(None), report) == (
        Phase.REJECTED,
        "upload rejected: path escapes the archive: ../x (+2 more)",
    )


def test_the_reason_is_never_empty_and_cut_short() -> None:
    assert refused_phase(_function(None), _report()) == (
        Phase.REJECTED,
        "upload rejected: refused by validation",
    )
    phase = refused_phase(_function(None), _report(_finding("r", "x" * 5000)))
    assert phase is not None
    assert len(phase[1]) < 400


def test_a_function_with_code_keeps_its_phase() -> None:
    code = CodeRef(sha256="a" * 64, blob_key="code/a", size=1, version="v1")
    assert refused_phase(_function(code), _report(_finding("r", "bad"))) is None

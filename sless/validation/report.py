"""The validation report: findings, stage results and the verdict they add up to.

A verdict only ever gets stricter as stages run: ``allow < review < reject``. A later stage
(the LLM review in particular) can add findings but can never lower what an earlier one
decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field


class Verdict(StrEnum):
    ALLOW = "allow"
    REVIEW = "review"
    REJECT = "reject"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def stricter(self, other: Verdict) -> Verdict:
        return self if self.rank >= other.rank else other


_RANK = {Verdict.ALLOW: 0, Verdict.REVIEW: 1, Verdict.REJECT: 2}

FindingSource = Literal["archive", "static", "manifest", "llm", "detonation"]
StageStatus = Literal["ok", "skipped", "error"]


class Finding(BaseModel):
    rule: str
    message: str
    file: str | None = None
    line: int | None = None
    source: FindingSource
    #: what this finding alone makes of the upload
    severity: Verdict = Verdict.REJECT
    #: what was observed (the detonation's bytes, event or file); canary values only
    evidence: str | None = None


class StageResult(BaseModel):
    """What one stage (archive, static, manifest, llm) did."""

    name: str
    status: StageStatus = "ok"
    #: why a stage was skipped or failed; never contains secrets
    detail: str | None = None
    findings: list[Finding] = Field(default_factory=list)
    #: the verdict this stage alone asks for (an error maps through a failure policy)
    verdict: Verdict = Verdict.ALLOW
    duration_ms: float = 0.0
    #: the versions of the third-party rules the stage ran (``{"guarddog": "3.2.0"}``)
    versions: dict[str, str] = Field(default_factory=dict)


class Report(BaseModel):
    sha256: str
    runtime: str
    verdict: Verdict
    findings: list[Finding] = Field(default_factory=list)
    stages: list[StageResult] = Field(default_factory=list)
    duration_ms: float = 0.0


def strictest(findings: Iterable[Finding], floor: Verdict = Verdict.ALLOW) -> Verdict:
    """The verdict ``findings`` ask for together: the strictest of them, never below ``floor``."""
    verdict = floor
    for finding in findings:
        verdict = verdict.stricter(finding.severity)
    return verdict


def static_finding(
    rule: str, message: str, file: str | None, line: int | None, severity: Verdict = Verdict.REVIEW
) -> Finding:
    """A finding of the static stage (semgrep or the Python-side checks)."""
    return Finding(
        rule=rule, message=message, file=file, line=line, source="static", severity=severity
    )


def combine(sha256: str, runtime: str, stages: list[StageResult], duration_ms: float) -> Report:
    """Fold the stages into one report; the strictest stage decides."""
    verdict = Verdict.ALLOW
    findings: list[Finding] = []
    for stage in stages:
        verdict = strictest(stage.findings, verdict.stricter(stage.verdict))
        findings.extend(stage.findings)
    return Report(
        sha256=sha256,
        runtime=runtime,
        verdict=verdict,
        findings=findings,
        stages=stages,
        duration_ms=duration_ms,
    )

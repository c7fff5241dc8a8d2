"""From answers (or failures) to findings and a stage verdict. The LLM can only add
suspicion: ``benign`` adds nothing, and a failure follows the provider's policy."""

from __future__ import annotations

import logging
import time

from sless.config import LLMSettings
from sless.validation.llm.asking import Answer, cut
from sless.validation.llm.chunking import Source
from sless.validation.report import Finding, StageResult, Verdict, strictest

logger = logging.getLogger(__name__)

STAGE = "llm"
RULE = "llm-review"
RULE_FAILED = "llm-review-failed"
#: findings kept from one answer
MAX_FINDINGS_PER_PART = 25
#: sent in place of a missing key (see the package docstring)
NO_KEY = "sless-no-api-key"

_SEVERITY = {"malicious": Verdict.REJECT, "suspicious": Verdict.REVIEW}


def answer_findings(answer: Answer, sources: dict[str, Source], secret: str) -> list[Finding]:
    severity = _SEVERITY.get(answer.verdict)
    if severity is None:
        return []  # benign adds nothing, and can take nothing away
    label = f"LLM review ({answer.verdict}, confidence {answer.confidence:.2f})"
    findings: list[Finding] = []
    for item in answer.findings[:MAX_FINDINGS_PER_PART]:
        source = sources.get(item.file.removeprefix("./"))
        line = item.line
        if source is None or line is None or not 1 <= line <= source.line_count:
            line = None
        findings.append(
            Finding(
                rule=RULE,
                message=f"{label}: {cut(scrub(oneline(item.reason), secret), 300)}",
                file=source.path if source else None,
                line=line,
                source="llm",
                severity=severity,
            )
        )
    if not findings:
        findings.append(
            Finding(
                rule=RULE,
                message=f"{label}: the upload as a whole",
                source="llm",
                severity=severity,
            )
        )
    return findings


def oneline(text: str) -> str:
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def failed_stage(
    settings: LLMSettings, detail: str, findings: list[Finding], started: float
) -> StageResult:
    """An ``error`` stage: the failure policy, and whatever the answered parts found."""
    if settings.api_key is not None:
        detail = scrub(detail, settings.api_key.get_secret_value())
    detail = cut(detail, 300)
    policy = Verdict(settings.failure_policy)
    logger.warning("LLM review failed, failure policy %s: %s", policy.value, detail)
    findings = list(findings)
    if policy is not Verdict.ALLOW:
        findings.append(
            Finding(
                rule=RULE_FAILED,
                message=f"LLM review failed ({detail}); failure policy: {policy.value}",
                source="llm",
                severity=policy,
            )
        )
    return StageResult(
        name=STAGE,
        status="error",
        detail=detail,
        findings=findings,
        verdict=strictest(findings, policy),
        duration_ms=ms(started),
    )


def scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret and secret != NO_KEY else text


def ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000

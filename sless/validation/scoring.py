"""Weak signals add up: one is a note, several together are held for review, many rejected.

Most of what makes code suspicious is not damning alone: a long high-entropy string, a
dynamic import, a lookup of a builtin by a computed name, a raw socket, a hostname read.
Benign handlers show one of these now and then; malicious packages show several at once
(an obfuscated loader is encoded data + dynamic lookup + exec of the result). Rules that
mark such a signal carry ``metadata.verdict: note``: their findings have severity
``allow`` and stay in the report as notes. This module weighs them per upload.

Every threshold and weight lives here, and ``tests/unit/validation/test_scoring.py`` pins
them. A signal counts once per upload however often it fires, so a file with a hundred
base64 literals is one signal, not a hundred.
"""

from __future__ import annotations

from collections.abc import Iterable

from sless.validation.report import Finding, Verdict, static_finding

__all__ = ["REJECT_AT", "REVIEW_AT", "UNWEIGHED_PREFIX", "WEIGHTS", "score", "signal_weight"]

#: total weight of distinct weak signals at which an upload is held for review
REVIEW_AT = 3
#: ... and at which it is rejected
REJECT_AT = 6
#: a weak signal's weight (rule id → weight); a rule not listed weighs 1
WEIGHTS: dict[str, int] = {}

RULE = "combined-signals"
#: notes that never count: GuardDog's capability rules (and its threat rules whose behaviour
#: ordinary functions have) describe what code can do, not a sign of intent; weighed as
#: signals they held a tenth of the benign corpus (docs/VALIDATION.md, GuardDog)
UNWEIGHED_PREFIX = "guarddog-"


def signal_weight(rule: str) -> int:
    return WEIGHTS.get(rule, 1)


def score(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` plus, when their weak signals add up, one finding that says so."""
    findings = list(findings)
    signals = sorted(
        {
            f.rule
            for f in findings
            if f.severity is Verdict.ALLOW and not f.rule.startswith(UNWEIGHED_PREFIX)
        }
    )
    total = sum(signal_weight(rule) for rule in signals)
    if total >= REJECT_AT:
        severity = Verdict.REJECT
    elif total >= REVIEW_AT:
        severity = Verdict.REVIEW
    else:
        return findings
    message = (
        f"{len(signals)} weak signals together (weight {total}; review at {REVIEW_AT}, "
        f"reject at {REJECT_AT}): {', '.join(signals)}"
    )
    return [*findings, static_finding(RULE, message, None, None, severity)]

"""Measuring static validation on a labelled split: recall on malicious samples, the
false-positive rate on benign ones.

A split is a folder with ``malicious/`` and ``benign/``, one folder per sample holding its
files and a ``meta.json``. semgrep runs once over the whole split (one start instead of
hundreds); the findings are grouped by sample, and each sample gets the verdict its own
upload would get: its static findings, scored on their own (:func:`scoring.score`), and
its manifest check. A malicious sample counts as caught when held for review or
rejected; a benign one is a false positive when it is either.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from sless.config import ValidationSettings
from sless.validation.detonation import Detonation, detonate
from sless.validation.manifests import check_manifests
from sless.validation.report import Finding, Verdict, strictest
from sless.validation.scoring import score
from sless.validation.static import scan_static

__all__ = ["SPLITS", "SplitResult", "evaluate_split"]

#: the splits under tests/validation/: tuned on, held back, and adversarial (issue 29)
SPLITS = ("corpus", "heldback", "adversarial", "heldback2")
_KINDS = ("malicious", "benign")
_RUNTIMES = {"python": "python3.11", "node": "nodejs20"}


@dataclass
class SplitResult:
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    rules: dict[str, list[str]] = field(default_factory=dict)

    def _names(self, kind: str) -> list[str]:
        return sorted(k for k in self.verdicts if k.startswith(kind + "/"))

    @property
    def malicious(self) -> int:
        return len(self._names("malicious"))

    @property
    def benign(self) -> int:
        return len(self._names("benign"))

    @property
    def missed(self) -> list[str]:
        return [k for k in self._names("malicious") if self.verdicts[k] is Verdict.ALLOW]

    @property
    def flagged(self) -> dict[str, list[str]]:
        return {
            k: self.rules[k] for k in self._names("benign") if self.verdicts[k] is not Verdict.ALLOW
        }

    @property
    def rejected(self) -> int:
        return sum(self.verdicts[k] is Verdict.REJECT for k in self._names("malicious"))

    @property
    def reviewed(self) -> int:
        return sum(self.verdicts[k] is Verdict.REVIEW for k in self._names("malicious"))

    @property
    def recall(self) -> float:
        return 1 - len(self.missed) / max(1, self.malicious)

    @property
    def fpr(self) -> float:
        return len(self.flagged) / max(1, self.benign)


async def _detonate(sample: Path, settings: ValidationSettings) -> list[Finding]:
    meta = json.loads((sample / "meta.json").read_text())
    runtime = _RUNTIMES[meta["runtime"]]
    plan = Detonation(
        egress=tuple(meta.get("egress", ())),
        secrets=tuple(meta.get("secrets", ())),
        budget_s=settings.detonation_budget_s,
    )
    stage = await detonate(sample, runtime, meta.get("entrypoint", "handler.handle"), plan)
    if stage.status == "skipped":
        raise RuntimeError(f"detonation unavailable: {stage.detail}")
    return stage.findings


def samples(split: Path, kind: str) -> list[Path]:
    return sorted(p for p in (split / kind).iterdir() if (p / "meta.json").is_file())


async def evaluate_split(
    split: Path, settings: ValidationSettings, *, detonation: bool = False
) -> SplitResult:
    """Score ``split``; with ``detonation``, each sample is also run once (as its upload
    would be, with the egress and secrets its ``meta.json`` declares) and its findings count."""
    scan = await scan_static(split, settings)
    if scan.error is not None:
        raise RuntimeError(f"semgrep failed on {split}: {scan.error}")
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in scan.findings:
        parts = (finding.file or "").split("/")
        if len(parts) >= 3 and parts[0] in _KINDS:
            relative = finding.model_copy(update={"file": "/".join(parts[2:])})
            grouped[f"{parts[0]}/{parts[1]}"].append(relative)
    result = SplitResult()
    for kind in _KINDS:
        for sample in samples(split, kind):
            key = f"{kind}/{sample.name}"
            manifest = await asyncio.to_thread(check_manifests, sample)
            findings = [*score(grouped[key]), *manifest.findings]
            if detonation:
                findings += await _detonate(sample, settings)
            result.verdicts[key] = strictest(findings)
            result.rules[key] = sorted(
                {f.rule for f in findings if f.severity is not Verdict.ALLOW}
            )
    return result

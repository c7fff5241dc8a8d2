"""Recall and false-positive rate of static analysis + manifest checks on the corpus.

semgrep runs once over the whole corpus (one upload-sized invocation instead of ~270), and
the findings are grouped per sample: a sample's verdict is the strictest of its own
findings and its manifest check. A malicious sample counts as caught when held for review
or rejected; a benign one is a false positive when it is either.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from sless.config import ValidationSettings
from sless.validation.manifests import check_manifests
from sless.validation.report import Verdict
from sless.validation.static import run_static

pytestmark = pytest.mark.integration

CORPUS = Path(__file__).resolve().parents[2] / "validation" / "corpus"
MIN_RECALL = 0.97
MAX_FPR = 0.02


def _samples(kind: str) -> list[Path]:
    return sorted(p for p in (CORPUS / kind).iterdir() if (p / "meta.json").is_file())


@pytest.fixture(scope="module")
async def verdicts() -> dict[str, Verdict]:
    result = await run_static(CORPUS, "python", ValidationSettings(semgrep_timeout_s=120))
    assert result.status == "ok", result.detail
    per_sample: dict[str, Verdict] = defaultdict(lambda: Verdict.ALLOW)
    for finding in result.findings:
        parts = (finding.file or "").split("/")
        if len(parts) >= 3 and parts[0] in ("malicious", "benign"):
            key = f"{parts[0]}/{parts[1]}"
            per_sample[key] = per_sample[key].stricter(finding.severity)
    out: dict[str, Verdict] = {}
    for kind in ("malicious", "benign"):
        for sample in _samples(kind):
            key = f"{kind}/{sample.name}"
            out[key] = per_sample[key].stricter(check_manifests(sample).verdict)
    return out


def test_corpus_is_big_and_varied() -> None:
    malicious, benign = _samples("malicious"), _samples("benign")
    assert len(malicious) >= 120
    assert len(benign) >= 120
    metas = [json.loads((s / "meta.json").read_text()) for s in malicious + benign]
    assert {m["runtime"] for m in metas} == {"python", "node"}
    categories = {json.loads((s / "meta.json").read_text())["category"] for s in malicious}
    assert len(categories) >= 14
    for runtime in ("python", "node"):
        assert sum(m["runtime"] == runtime for m in metas) >= 100


def test_recall(verdicts: dict[str, Verdict]) -> None:
    malicious = [k for k in verdicts if k.startswith("malicious/")]
    missed = sorted(k for k in malicious if verdicts[k] is Verdict.ALLOW)
    recall = 1 - len(missed) / len(malicious)
    assert recall >= MIN_RECALL, f"recall {recall:.3f}; missed: {missed}"


def test_false_positive_rate(verdicts: dict[str, Verdict]) -> None:
    benign = [k for k in verdicts if k.startswith("benign/")]
    flagged = sorted(k for k in benign if verdicts[k] is not Verdict.ALLOW)
    fpr = len(flagged) / len(benign)
    assert fpr <= MAX_FPR, f"false-positive rate {fpr:.3f}; flagged: {flagged}"


def test_expected_verdicts_for_rejects(verdicts: dict[str, Verdict]) -> None:
    """Samples whose meta says reject must not merely be held for review."""
    weak = []
    for sample in _samples("malicious"):
        meta = json.loads((sample / "meta.json").read_text())
        verdict = verdicts[f"malicious/{sample.name}"]
        if meta["expect"] == "reject" and verdict is not Verdict.REJECT:
            weak.append(sample.name)
    assert len(weak) <= len(_samples("malicious")) * 0.05, weak

"""Recall and false-positive rate of static analysis + manifest checks on both splits.

``corpus`` is the split the rules were tuned on; ``heldback`` was written before the
behaviour rules of issue 13 and frozen (tests/validation/heldback/README.md). semgrep runs
once over each split (one upload-sized invocation instead of hundreds), and the findings
are grouped per sample and scored per sample (sless.validation.evaluating). A malicious
sample counts as caught when held for review or rejected; a benign one is a false
positive when it is either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sless.config import ValidationSettings
from sless.validation.evaluating import SplitResult, evaluate_split
from sless.validation.report import Verdict

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2] / "validation"
CORPUS = ROOT / "corpus"
HELDBACK = ROOT / "heldback"
MIN_RECALL = 0.97
MAX_FPR = 0.02
#: the targets of issue 13, on code the rules were not tuned on
HELDBACK_MIN_RECALL = 0.95
HELDBACK_MAX_FPR = 0.01


def _samples(kind: str, split: Path = CORPUS) -> list[Path]:
    return sorted(p for p in (split / kind).iterdir() if (p / "meta.json").is_file())


@pytest.fixture(scope="module")
async def verdicts() -> dict[str, Verdict]:
    result = await evaluate_split(CORPUS, ValidationSettings(semgrep_timeout_s=300))
    return result.verdicts


@pytest.fixture(scope="module")
async def heldback() -> SplitResult:
    return await evaluate_split(HELDBACK, ValidationSettings(semgrep_timeout_s=300))


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


def test_heldback_split_is_varied() -> None:
    malicious, benign = _samples("malicious", HELDBACK), _samples("benign", HELDBACK)
    assert len(malicious) >= 50
    assert len(benign) >= 48
    metas = [json.loads((s / "meta.json").read_text()) for s in malicious + benign]
    assert {m["runtime"] for m in metas} == {"python", "node"}


def test_heldback_recall(heldback: SplitResult) -> None:
    assert heldback.recall >= HELDBACK_MIN_RECALL, f"recall {heldback.recall:.3f}"


def test_heldback_false_positive_rate(heldback: SplitResult) -> None:
    assert heldback.fpr <= HELDBACK_MAX_FPR, f"false-positive rate {heldback.fpr:.3f}"

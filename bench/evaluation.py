"""Recall and false-positive rate of validation on the evaluation splits.

    uv run python bench/evaluation.py                 # every split, static stage only
    uv run python bench/evaluation.py heldback -v     # one split, with the misses listed
    uv run python bench/evaluation.py --detonate      # static + detonation (needs root)
    uv run python bench/evaluation.py --guarddog G.json   # what GuardDog would add
                                                          # (G.json: bench/guarddog_labels.py)

Splits (``tests/validation/``): ``corpus`` (the tuned split: rules were written against
it), ``heldback`` (written before the behaviour rules and frozen; never tuned on) and
``adversarial`` (issue 29: behaviour hidden from static reading, written before the
detonation stage). With ``--detonate`` each sample also runs once, as its upload would.
semgrep runs once over a whole split; findings are grouped per sample and each sample
is scored on its own, as its upload would be (static stage + manifest checks).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from sless.config import ValidationSettings
from sless.validation.evaluating import SPLITS, SplitResult, evaluate_split

ROOT = Path(__file__).resolve().parents[1] / "tests" / "validation"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    names = ", ".join(SPLITS)
    parser.add_argument("splits", nargs="*", help=f"any of: {names} (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list misses and FPs")
    parser.add_argument(
        "--detonate", action="store_true", help="also run each sample once (needs root)"
    )
    parser.add_argument(
        "--guarddog",
        type=Path,
        help="GuardDog's labels (bench/guarddog_labels.py): report what it would add",
    )
    args = parser.parse_args()
    guarddog = json.loads(args.guarddog.read_text()) if args.guarddog else None
    unknown = set(args.splits) - set(SPLITS)
    if unknown:
        parser.error(f"unknown split(s): {', '.join(sorted(unknown))}")
    for split in args.splits or SPLITS:
        result = await evaluate_split(
            ROOT / split, ValidationSettings(semgrep_timeout_s=300), detonation=args.detonate
        )
        print(
            f"{split:9} malicious {result.malicious:4}  recall {result.recall:.3f}"
            f"  (reject {result.rejected}, review {result.reviewed})   benign {result.benign:4}"
            f"  FP rate {result.fpr:.3f} ({len(result.flagged)})"
        )
        if guarddog is not None:
            _guarddog_adds(split, result, guarddog, args.verbose)
        if args.verbose:
            for name in result.missed:
                print(f"    missed  {name}")
            for name, rules in result.flagged.items():
                print(f"    flagged {name}: {', '.join(rules)}")


#: GuardDog labels counted as a flag: its "suspicious" and "high_risk" ("low" flags a
#: fifth of the benign samples)
_GUARDDOG_FLAGS = ("suspicious", "high_risk")


def _guarddog_adds(split: str, result: SplitResult, labels: dict, verbose: bool) -> None:
    """GuardDog alone, and what it adds to our verdicts: catches of our misses, new FPs."""
    flagged = {
        k.split("/", 1)[1] for k, v in labels.items()
        if k.startswith(split + "/") and v["label"] in _GUARDDOG_FLAGS
    }  # fmt: skip
    malicious = [k for k in result.verdicts if k.startswith("malicious/")]
    benign = [k for k in result.verdicts if k.startswith("benign/")]
    added = sorted(set(result.missed) & flagged)
    new_fp = sorted((flagged & set(benign)) - set(result.flagged))
    recall = len(flagged & set(malicious)) / max(1, len(malicious))
    print(
        f"{'':9} GuardDog alone: recall {recall:.3f}"
        f"  FP rate {len(flagged & set(benign)) / max(1, len(benign)):.3f};"
        f"  added to ours: {len(added)} caught, {len(new_fp)} false positives"
    )
    if verbose:
        for name in added + new_fp:
            print(f"    guarddog {name}: {', '.join(labels[f'{split}/{name}']['rules'])}")


if __name__ == "__main__":
    asyncio.run(main())

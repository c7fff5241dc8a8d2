"""Recall and false-positive rate of validation on the evaluation splits.

    uv run python bench/evaluation.py                 # every split, static stage only
    uv run python bench/evaluation.py heldback -v     # one split, with the misses listed
    uv run python bench/evaluation.py --detonate      # static + detonation (needs root)

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
from pathlib import Path

from sless.config import ValidationSettings
from sless.validation.evaluating import SPLITS, evaluate_split

ROOT = Path(__file__).resolve().parents[1] / "tests" / "validation"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    names = ", ".join(SPLITS)
    parser.add_argument("splits", nargs="*", help=f"any of: {names} (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="list misses and FPs")
    parser.add_argument(
        "--detonate", action="store_true", help="also run each sample once (needs root)"
    )
    args = parser.parse_args()
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
        if args.verbose:
            for name in result.missed:
                print(f"    missed  {name}")
            for name, rules in result.flagged.items():
                print(f"    flagged {name}: {', '.join(rules)}")


if __name__ == "__main__":
    asyncio.run(main())

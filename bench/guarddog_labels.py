"""GuardDog's verdict on every sample of the evaluation splits, as JSON on stdout.

GuardDog's own verdict (its risk engine), for comparison with what the static stage makes
of its rules (``sless/validation/guarddog.py``). Run it in GuardDog's own environment:
importing ``guarddog`` starts its metadata heuristics, which fetch lists from the network,
and sless never imports it:

    uv venv /tmp/guarddog -p 3.11 && VIRTUAL_ENV=/tmp/guarddog uv pip install guarddog==3.2.0
    /tmp/guarddog/bin/python bench/guarddog_labels.py > /tmp/guarddog.json
    uv run python bench/evaluation.py --detonate --guarddog /tmp/guarddog.json

Only GuardDog's source-code analysis runs (its YARA rules and its risk engine, as
``guarddog pypi|npm scan`` applies them to a directory); its metadata rules need a
registry and are not run. Each sample gets GuardDog's package label
(``no_risks_detected``, ``low``, ``suspicious``, ``high_risk``) and the rules that matched.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from guarddog.analyzer.analyzer import Analyzer  # type: ignore[import-not-found]
from guarddog.ecosystems import ECOSYSTEM  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1] / "tests" / "validation"


def main() -> None:
    logging.disable(logging.CRITICAL)
    analyzers = {"python": Analyzer(ECOSYSTEM.PYPI), "node": Analyzer(ECOSYSTEM.NPM)}
    out = {}
    for split in ("corpus", "heldback", "adversarial"):
        for kind in ("malicious", "benign"):
            for sample in sorted((ROOT / split / kind).iterdir()):
                if not (sample / "meta.json").is_file():
                    continue
                analyzer = analyzers[json.loads((sample / "meta.json").read_text())["runtime"]]
                found = analyzer.analyze_sourcecode(str(sample))
                risk = analyzer.calculate_package_risk_score(found, None)
                label = risk.get("label")
                out[f"{split}/{kind}/{sample.name}"] = {
                    "label": str(getattr(label, "value", label)),
                    "rules": sorted(k for k, v in found["results"].items() if v),
                }
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()

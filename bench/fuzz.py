"""The long fuzz run: schemathesis against a real ``sless up``'s /openapi.json, as a
tenant and as the admin, then the platform's health.

    uv run python bench/fuzz.py --max-examples 80

``--max-examples`` is per operation and phase; 80 gives well over 5,000 cases over the
34 operations. Prints the cases run and the failures (5xx, undeclared status, answers
off their schema); the exit status is 1 if any.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.harness import ADMIN, platform_on  # noqa: E402
from tests.fuzz.fuzzing import ENV, fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-examples", type=int, default=80)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sless-fuzz-"))
    work.chmod(0o755)
    try:
        with platform_on(work / "data", ENV) as platform:
            acme = platform.tenant("acme")
            acme.deploy("hello")
            runs = [
                fuzz(platform.url, "tenant", acme.token, args.max_examples, work),
                fuzz(platform.url, "admin", ADMIN, args.max_examples, work),
            ]
            ready = httpx.get(f"{platform.url}/readyz").status_code
            answer = httpx.post(f"{platform.url}/fn/{acme.namespace}/hello", timeout=60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for run in runs:
        if run.returncode != 0:
            print(run.output[-20000:])
    print("| as | cases | failures |")
    print("|---|---|---|")
    for run in runs:
        print(f"| {run.who} | {run.cases} | {run.failures} |")
    print(f"total cases: {sum(r.cases for r in runs)}")
    print(f"afterwards: /readyz {ready}, the tenant's function {answer.status_code}")
    healthy = ready == 200 and answer.status_code == 200
    return 0 if healthy and all(r.returncode == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

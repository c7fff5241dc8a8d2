"""The fault table of docs/RELIABILITY.md: every scenario of tests/faults/ on a real
``sless up``, under steady load, with its figures (requests, failed, records lost,
recovery time), then the RabbitMQ broker restart test of tests/integration/events/.

    uv run python bench/faults.py            # all of them (about 10 minutes)
    uv run python bench/faults.py sigkill    # the scenarios whose name contains "sigkill"

The load is ``SLESS_FAULT_RATE`` invocations per second (default 30: two cores shared
with other work) for ``SLESS_FAULT_SECONDS`` (default 20) per scenario, plus an upload
every 5 s and 2 asynchronous calls per second. The tests assert what is promised; this
prints the measured figures.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults import scenarios  # noqa: E402
from tests.faults.harness import Figures  # noqa: E402

SCENARIOS: list[tuple[str, Callable[[Path], scenarios.Result]]] = [
    ("postgres-restart", lambda d: scenarios.postgres_outage(d, kill=False)),
    ("postgres-sigkill", lambda d: scenarios.postgres_outage(d, kill=True)),
    ("sigkill-sless-up", scenarios.platform_sigkill),
    ("s3-unreachable", scenarios.s3_unreachable),
    ("disk-full", scenarios.disk_full),
    ("crash-storm", scenarios.crash_storm),
]


def rabbitmq_restart() -> Figures:
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/integration/events/test_rabbitmq.py",
            "-k",
            "broker_restart",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.monotonic() - started
    passed = result.returncode == 0
    return Figures(
        "RabbitMQ broker restart (stop_app/start_app mid-stream)",
        300,
        0 if passed else -1,
        0 if passed else None,
        None,
        f"300 messages, each processed, none dead-lettered: test {'passed' if passed else 'FAILED'}"
        f" in {took:.0f} s",
    )


def main(argv: list[str]) -> int:
    wanted = argv[0] if argv else ""
    rows: list[Figures] = []
    for name, run in SCENARIOS:
        if wanted not in name:
            continue
        work = Path(tempfile.mkdtemp(prefix="sless-fault-"))
        work.chmod(0o755)
        print(f"==> {name}", file=sys.stderr, flush=True)
        try:
            rows.append(run(work).figures)
        except Exception:
            traceback.print_exc()
            rows.append(Figures(name, 0, -1, None, None, "the scenario raised (see above)"))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if wanted in "rabbitmq-restart":
        print("==> rabbitmq-restart", file=sys.stderr, flush=True)
        rows.append(rabbitmq_restart())
    print(
        f"\nload: {scenarios.RATE:.0f} invocations/s for {scenarios.SECONDS:.0f} s per scenario,"
        " an upload every 5 s, 2 async calls/s\n"
    )
    print("| scenario | requests | failed | records lost | recovery (s) | notes |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(row.row())
    return 0 if all(r.failed >= 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

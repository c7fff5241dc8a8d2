"""Soak: a real ``sless up`` under mixed load for N minutes, its resources sampled.

    scripts/soak --minutes 20

Load: ``--rate`` invocations per second over two tenants' functions, 2 asynchronous calls
per second, a new version of a function uploaded (validated, built, deployed) every 10 s,
and a cron trigger firing every second. Every ``--every`` seconds it samples the RSS of
the gateway process (``sless up``), the summed RSS of its workers (every process under
it), the gateway's open file descriptors and the PostgreSQL client connections. It
prints the samples, then the first sample after the warm-up (a fifth of the run, at
least one minute) against the last, with the growth in percent; the exit status is 1 if
any figure grew by 10% or more, or if a call failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.harness import Load, Platform, platform_on  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry))
    return tree


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _descendants(pid: int) -> list[int]:
    tree, found, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@dataclass
class Sample:
    t: float
    gateway_rss: int
    workers_rss: int
    workers: int
    fds: int
    pg_connections: int


def sample(platform: Platform, t: float) -> Sample:
    assert platform.process is not None
    pid = platform.process.pid
    workers = _descendants(pid)
    connections = platform.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE backend_type = 'client backend'"
        " AND pid <> pg_backend_pid()"
    )[0]["n"]
    return Sample(
        t,
        _rss(pid),
        sum(_rss(w) for w in workers),
        len(workers),
        len(os.listdir(f"/proc/{pid}/fd")),
        connections,
    )


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=20)
    parser.add_argument("--rate", type=float, default=30, help="invocations per second")
    parser.add_argument("--every", type=float, default=30, help="seconds between samples")
    args = parser.parse_args()
    seconds = args.minutes * 60
    warmup = max(60.0, seconds / 5)
    work = Path(tempfile.mkdtemp(prefix="sless-soak-"))
    work.chmod(0o755)
    try:
        with platform_on(work / "data") as platform:
            acme, globex = platform.tenant("acme"), platform.tenant("globex")
            for tenant in (acme, globex):
                tenant.deploy("hello", spec={"timeout_s": 3})
            acme.deploy("deployed", spec={"timeout_s": 3})
            with acme.client() as client:
                response = client.put(
                    f"/v1/namespaces/{acme.namespace}/triggers/tick",
                    json={"type": "cron", "function": "hello", "schedule": "* * * * * *"},
                )
                assert response.status_code in (200, 201), response.text
            load = Load(
                platform.url,
                [(acme.namespace, "hello"), (globex.namespace, "hello")],
                rate=args.rate,
                seconds=seconds,
                upload_to=(acme, "deployed"),
                upload_every_s=10,
                async_rate=2,
            ).start()
            samples: list[Sample] = []
            print("t (s)  gateway RSS (MiB)  workers RSS (MiB)  workers  fds  pg conns", flush=True)
            while load.now() < seconds:
                s = sample(platform, load.now())
                samples.append(s)
                print(
                    f"{s.t:6.0f}  {_mib(s.gateway_rss):>17}  {_mib(s.workers_rss):>17}"
                    f"  {s.workers:7}  {s.fds:3}  {s.pg_connections:8}",
                    flush=True,
                )
                time.sleep(min(args.every, max(0.1, seconds - load.now())))
            load.join()
            samples.append(sample(platform, load.now()))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    after = [s for s in samples if s.t >= warmup] or samples[-1:]
    first, last = after[0], samples[-1]
    failed = load.failed()
    print(
        f"\n{len(load.outcomes)} requests ({len(load.of('invoke'))} invocations,"
        f" {len(load.of('async'))} async, {len(load.of('upload'))} uploads), failed: {len(failed)}"
    )
    for o in failed[:10]:
        print(f"  failed: at {o.t:.1f} s {o.kind} {o.status} {o.target}")
    print(f"after the warm-up ({warmup:.0f} s) → end ({last.t:.0f} s):")
    print("| figure | after warm-up | end | growth |")
    print("|---|---|---|---|")
    worst = 0.0
    for name, a, b, unit in [
        ("gateway RSS", first.gateway_rss, last.gateway_rss, "MiB"),
        ("workers RSS (sum)", first.workers_rss, last.workers_rss, "MiB"),
        ("gateway open fds", first.fds, last.fds, ""),
        ("PostgreSQL connections", first.pg_connections, last.pg_connections, ""),
    ]:
        growth = (b - a) / a * 100 if a else 0.0
        worst = max(worst, growth)
        shown = (_mib(a), _mib(b)) if unit else (str(a), str(b))
        print(f"| {name} | {shown[0]} {unit} | {shown[1]} {unit} | {growth:+.1f}% |")
    return 0 if worst < 10 and not failed else 1


if __name__ == "__main__":
    sys.exit(main())

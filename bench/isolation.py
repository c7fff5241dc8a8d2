"""gVisor against bubblewrap, same run: cold start (pre-started and not), warm call p50/p99
and the idle worker's memory (PSS).

    uv run python bench/isolation.py [--runs 5] [--calls 300] [--runsc PATH]

For each isolation, ``--runs`` times, with the Python runtime and a trivial handler:

- cold, not pre-started: ``start_worker`` until the socket accepts, plus the first call;
- cold, pre-started: ``PrestartPool.take`` (specialize a generic worker) plus the first
  call, the pool filled beforehand (what a function's first call costs with the pool);
- warm: ``--calls`` keep-alive calls on one worker, p50 and p99;
- idle PSS: the sum of ``Pss`` (smaps_rollup) over every host process of an idle worker
  (its cgroup's): for gVisor the Sentry, the gofer and ``runsc`` included.

Workers run as a tenant's unprivileged uid (as the gateway, when root, runs them). Ratios
are gVisor / bubblewrap. The gates of issue 30 are shown as targets, not checked:
pre-started cold start <= 2x, warm p50 <= 1.3x. No assertion: numbers are for people.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
from table import Row, note

from sless.sandbox import (
    Gvisor,
    HostIds,
    Limits,
    PrestartPool,
    SandboxSpec,
    Worker,
    default_runtimes_dir,
    runsc_available,
    start_worker,
)

HANDLER = "def handle(event, context):\n    return {'ok': True}\n"
LIMITS = Limits(memory_mb=128)
#: a tenant uid of the default range, apart from the tests' (100_060_001-2)
HOST_IDS = HostIds(uid=100_060_009, gid=100_060_009) if os.geteuid() == 0 else None


def _spec(root: Path, name: str) -> SandboxSpec:
    work = root / name
    (work / "code").mkdir(parents=True)
    (work / "code" / "handler.py").write_text(HANDLER)
    for path in (work, work / "code"):
        path.chmod(0o755)
    (work / "code" / "handler.py").chmod(0o644)
    return SandboxSpec(
        name=f"bench.{name}",
        runtime="python3.11",
        code_dir=work / "code",
        deps_dir=None,
        entrypoint="handler.handle",
        env={},
        socket_dir=root / f"s{name}",
        log_file=work / "log",
        limits=LIMITS,
        function="bench",
        namespace="bench",
        host_ids=HOST_IDS,
    )


async def _call(session: aiohttp.ClientSession) -> float:
    started = time.perf_counter()
    async with session.post("http://w/", json={"a": 1}) as response:
        await response.read()
        response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def _session(worker: Worker) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(worker.socket_path)))


def _pss_kb(worker: Worker) -> int:
    total = 0
    for pid in worker.pids():
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="sless-bench-", dir="/tmp"))
    root.chmod(0o711)  # the workers' uids reach their own directories in it
    return root


async def measure(
    root: Path, isolation: Gvisor | None, runs: int, calls: int
) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"cold": [], "prestarted": [], "p50": [], "p99": []}
    figures["pss"] = []
    runtimes = default_runtimes_dir()
    pool = PrestartPool(
        slots_dir=root / "slots",
        sockets_dir=root,
        size=1,
        limits=LIMITS,
        runtimes_dir=runtimes,
        isolation=isolation,
        refill_delay_s=0,
    )
    pool.start(HOST_IDS)
    try:
        for _ in range(runs):
            spec = _spec(root, uuid.uuid4().hex[:8])
            started = time.perf_counter()
            worker = await start_worker(spec, runtimes_dir=runtimes, isolation=isolation)
            async with _session(worker) as session:
                await _call(session)
                figures["cold"].append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(1)
                figures["pss"].append(_pss_kb(worker) / 1024)
                warm = sorted([await _call(session) for _ in range(calls)])
            figures["p50"].append(statistics.median(warm))
            figures["p99"].append(warm[int(len(warm) * 0.99) - 1])
            await worker.stop()

            await pool.wait_filled()
            spec = _spec(root, uuid.uuid4().hex[:8])
            started = time.perf_counter()
            taken = await pool.take(spec)
            if taken is None:
                raise RuntimeError("the pool had no worker for the bench's spec")
            async with _session(taken) as session:
                await _call(session)
            figures["prestarted"].append((time.perf_counter() - started) * 1000)
            await taken.stop()
    finally:
        await pool.close()
    return figures


def rows(args: argparse.Namespace) -> list[Row]:
    gvisor, reason = runsc_available(args.runsc, args.platform)
    if gvisor is None:
        note(f"isolation: no gVisor figures, no usable runsc ({reason})")
        return []
    note(f"gVisor: {gvisor.runsc}, platform {gvisor.platform}")
    base = asyncio.run(measure(_root(), None, args.runs, args.calls))
    under = asyncio.run(measure(_root(), gvisor, args.runs, args.calls))
    labels = {
        "cold": ("cold start, not pre-started (start + first call)", "ms", ""),
        "prestarted": ("cold start, pre-started (take + first call)", "ms", "ratio <= 2"),
        "p50": ("warm call p50", "ms", "ratio <= 1.3"),
        "p99": ("warm call p99", "ms", ""),
        "pss": ("idle worker PSS", "MiB", ""),
    }
    return [
        Row(
            measure=f"gVisor: {label}",
            figure=statistics.median(under[key]),
            unit=unit,
            baseline=statistics.median(base[key]),
            baseline_name="bubblewrap",
            target=target,
            samples=tuple(under[key]),
        )
        for key, (label, unit, target) in labels.items()
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--runsc", default=os.environ.get("SLESS_SANDBOX_RUNSC", "runsc"))
    parser.add_argument("--platform", default="auto")


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    add_arguments(parser)
    print(render(rows(parser.parse_args())))

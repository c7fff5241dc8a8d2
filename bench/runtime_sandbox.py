"""Worker start time and request latency: sandboxed vs. unsandboxed, same run.

    uv run python bench/runtime_sandbox.py [--rounds 10] [--requests 300]

Prints, per runtime, the median start time (spawn -> socket accepts) and the median
keep-alive request latency with bubblewrap, without it (``unsafe_no_sandbox``, the
baseline), and their ratio. No assertion: numbers are for people.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import aiohttp

from sless.sandbox import (
    HostIds,
    Limits,
    Runtime,
    SandboxSpec,
    default_runtimes_dir,
    start_worker,
)

HANDLERS = {
    "python3.11": ("handler.py", "def handle(event, context):\n    return {'ok': True}\n"),
    "nodejs20": ("handler.js", "exports.handle = async () => ({ ok: true });\n"),
}


#: as root, workers run as a tenant's unprivileged host uid (the sandbox refuses host root)
HOST_IDS = HostIds(uid=100_060_008, gid=100_060_008) if os.geteuid() == 0 else None


def make_spec(root: Path, runtime: Runtime) -> SandboxSpec:
    """A worker of the hello handler under ``root`` (which the worker's uid must be able to
    traverse: ``0o711``, as ``bench_root`` makes it)."""
    work = root / uuid.uuid4().hex[:8]
    (work / "code").mkdir(parents=True)
    for path in (work, work / "code"):
        path.chmod(0o755)
    name, source = HANDLERS[runtime]
    (work / "code" / name).write_text(source)
    (work / "code" / name).chmod(0o644)
    return SandboxSpec(
        name=f"bench.{work.name}",
        runtime=runtime,
        code_dir=work / "code",
        deps_dir=None,
        entrypoint="handler.handle",
        env={},
        socket_dir=work / "sock",
        log_file=work / "log",
        limits=Limits(memory_mb=128),
        host_ids=HOST_IDS,
    )


@contextlib.contextmanager
def bench_root() -> Iterator[Path]:
    """A temporary directory the workers' uids can traverse, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="sless-bench-") as tmp:
        root = Path(tmp)
        root.chmod(0o711)
        yield root


async def measure(
    root: Path, runtime: Runtime, unsafe: bool, rounds: int, requests: int
) -> tuple[float, float]:
    starts, latencies = [], []
    for _ in range(rounds):
        spec = make_spec(root, runtime)
        t0 = time.perf_counter()
        worker = await start_worker(
            spec, runtimes_dir=default_runtimes_dir(), unsafe_no_sandbox=unsafe
        )
        starts.append(time.perf_counter() - t0)
        try:
            connector = aiohttp.UnixConnector(path=str(worker.socket_path))
            async with aiohttp.ClientSession(connector=connector) as session:
                for _ in range(requests // rounds):
                    t1 = time.perf_counter()
                    async with session.post("http://w/", json={"a": 1}) as response:
                        await response.read()
                    latencies.append(time.perf_counter() - t1)
        finally:
            await worker.stop()
    return statistics.median(starts), statistics.median(latencies)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    with bench_root() as root:
        for runtime in ("python3.11", "nodejs20"):
            base_start, base_lat = await measure(root, runtime, True, args.rounds, args.requests)
            sb_start, sb_lat = await measure(root, runtime, False, args.rounds, args.requests)
            print(
                f"{runtime:11s} start: sandbox {sb_start * 1000:6.1f} ms, "
                f"bare {base_start * 1000:6.1f} ms (x{sb_start / base_start:.2f}); "
                f"request: sandbox {sb_lat * 1e6:6.0f} us, "
                f"bare {base_lat * 1e6:6.0f} us (x{sb_lat / base_lat:.2f})"
            )


if __name__ == "__main__":
    asyncio.run(main())

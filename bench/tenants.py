"""Noisy neighbour: one tenant's latency while another tenant burns CPU, same run.

Starts a real platform (`sless up`: embedded PostgreSQL, bubblewrap workers) on a free
port, onboards two tenants and measures, in the same run:

- baseline: tenant B's hello function, latency p50/p99 of sequential calls, alone;
- contended: the same calls while tenant A keeps every worker of its busy-loop functions
  busy (``--burners`` functions, each at the backend's full worker count);

and prints the contended/baseline ratios. Each tenant's workers share one cpu cgroup with
equal ``cpu.shares`` (sless/sandbox/cgroups.py), so A's many busy workers count as one
tenant against B's one. The bench says whether those groups exist on this host. Semgrep is
switched off: validation is not what is measured. Usage:

    uv run python bench/tenants.py [--requests 300] [--burners 3] [--burn-ms 200]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import time
import zipfile
from pathlib import Path

import aiohttp
import httpx
from platform_process import admin_client, running_platform

#: workers per function in embedded mode (the default max_instances of a FunctionSpec)
WORKERS_PER_FUNCTION = 4
HELLO = "def handle(event, context):\n    return 'hi'\n"
BURN = (
    "import time\n\n\n"
    "def handle(event, context):\n"
    "    end = time.perf_counter() + {seconds}\n"
    "    spins = 0\n"
    "    while time.perf_counter() < end:\n"
    "        spins += 1\n"
    "    return {{'spins': spins}}\n"
)


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("handler.py", (2020, 1, 1, 0, 0, 0)), source)
    return buffer.getvalue()


def _deploy(client: httpx.Client, namespace: str, name: str, source: str) -> None:
    path = f"/v1/namespaces/{namespace}/functions/{name}"
    client.put(path, json={"concurrency": 1, "timeout_s": 60}).raise_for_status()
    client.post(path + "/upload", content=_zip(source)).raise_for_status()
    deadline = time.monotonic() + 120
    while (phase := client.get(path).json()["status"]["phase"]) != "Ready":
        if phase in ("Failed", "Rejected") or time.monotonic() > deadline:
            sys.exit(f"{namespace}/{name} did not become Ready: {phase}")
        time.sleep(0.05)


async def _latencies(session: aiohttp.ClientSession, url: str, requests: int) -> list[float]:
    found = []
    for _ in range(requests):
        started = time.perf_counter()
        async with session.get(url) as response:
            await response.read()
            if response.status != 200:
                raise RuntimeError(f"{url}: {response.status}")
        found.append((time.perf_counter() - started) * 1000)
    return found


def _summary(name: str, latencies: list[float]) -> dict[str, float]:
    q = statistics.quantiles(latencies, n=100)
    figures = {"p50": q[49], "p99": q[98]}
    print(f"{name:<28} p50 {figures['p50']:7.2f} ms  p99 {figures['p99']:7.2f} ms")
    return figures


async def _burn(session: aiohttp.ClientSession, url: str, stop: asyncio.Event) -> int:
    done = 0
    while not stop.is_set():
        async with session.get(url) as response:
            await response.read()
        done += 1
    return done


async def _measure(url: str, requests: int, burners: int) -> None:
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        hello = f"{url}/fn/sless-benchb/hello"
        await _latencies(session, hello, 50)  # warm-up
        alone = _summary("B alone (baseline)", await _latencies(session, hello, requests))
        stop = asyncio.Event()
        burns = [
            asyncio.create_task(_burn(session, f"{url}/fn/sless-bencha/burn{i}", stop))
            for i in range(burners)
            for _ in range(WORKERS_PER_FUNCTION)
        ]
        await asyncio.sleep(3)  # every burner worker started and busy
        busy = _summary(
            f"B while A burns ({len(burns)} busy)", await _latencies(session, hello, requests)
        )
        stop.set()
        burned = sum(await asyncio.gather(*burns))
    print(f"A's busy-loop invocations completed meanwhile: {burned}")
    print(
        f"ratio contended/baseline: p50 x{busy['p50'] / alone['p50']:.2f}, "
        f"p99 x{busy['p99'] / alone['p99']:.2f}"
    )


def _cpu_groups() -> str:
    root = Path("/sys/fs/cgroup/cpu/sless")
    shares = {}
    for tenant in ("sless-bencha", "sless-benchb"):
        path = root / tenant / "cpu.shares"
        if path.exists():
            shares[tenant] = path.read_text().strip()
    if len(shares) < 2:
        return "per-tenant cpu groups: absent on this host (no cpu controller?)"
    return "per-tenant cpu groups: " + ", ".join(f"{t} cpu.shares={s}" for t, s in shares.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--burners", type=int, default=3, help="busy functions of tenant A")
    parser.add_argument("--burn-ms", type=int, default=200, help="busy loop per A invocation")
    args = parser.parse_args()

    with running_platform({"SLESS_VALIDATION_STATIC_ENABLED": "false"}) as url:
        admin = admin_client(url)
        clients = {}
        for name in ("bencha", "benchb"):
            token = admin.post("/v1/admin/tenants", json={"name": name}).json()["token"]
            clients[name] = httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
            )
        _deploy(clients["benchb"], "sless-benchb", "hello", HELLO)
        burn = BURN.format(seconds=args.burn_ms / 1000)
        for i in range(args.burners):
            _deploy(clients["bencha"], "sless-bencha", f"burn{i}", burn)
        print(
            f"{os.cpu_count()} CPUs; tenant A: {args.burners} busy-loop functions x "
            f"{WORKERS_PER_FUNCTION} workers, each invocation spinning {args.burn_ms} ms; "
            f"tenant B: {args.requests} sequential calls of a hello function"
        )
        asyncio.run(_measure(url, args.requests, args.burners))
        print(_cpu_groups())
        for client in [admin, *clients.values()]:
            client.close()


if __name__ == "__main__":
    main()

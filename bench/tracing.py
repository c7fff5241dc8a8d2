"""The cost of tracing on the warm path: the gateway's CPU per call, tracing on and off.

Starts two real platforms (`sless up`) in one run, one with ``SLESS_GATEWAY_TRACING``
on (the default: every call gets a W3C trace context, no exporter set) and one with it
off, deploys the same Python function to each and warms them. Then ``--runs`` times, in
turn, the same load on each: ``--calls`` calls over ``--connections`` keep-alive
connections. The figure is the gateway process's CPU (user + system of every thread,
from ``/proc/<pid>/stat``) per call: the load average of a shared machine moves wall
times, much less the CPU a call costs. Ratio on / off; the target is under 1.05.

    uv run python bench/tracing.py [--runs 5] [--calls 3000] [--connections 8]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from pathlib import Path

import httpx
from platform_process import Platform, admin_client, deploy, onboard, started_platform
from table import Row, render, row

HELLO = {"handler.py": "def handle(event, context):\n    return {'ok': True}\n"}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(url: str, calls: int, connections: int) -> None:
    """``calls`` GETs of ``url`` over ``connections`` keep-alive clients in threads."""
    per_client = calls // connections
    errors: list[str] = []

    def worker() -> None:
        with httpx.Client(timeout=60) as client:
            for _ in range(per_client):
                response = client.get(url)
                if response.status_code != 200:
                    errors.append(f"{response.status_code} {response.text[:200]}")
                    return

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        sys.exit(f"a call failed: {errors[0]}")


def cpu_per_call_us(platform: Platform, url: str, calls: int, connections: int) -> float:
    before = cpu_seconds(platform.pid)
    load(url, calls, connections)
    return (cpu_seconds(platform.pid) - before) / calls * 1e6


def rows(args: argparse.Namespace) -> list[Row]:
    samples: dict[str, list[float]] = {"on": [], "off": []}
    with contextlib.ExitStack() as stack:
        urls: dict[str, tuple[Platform, str]] = {}
        for mode, flag in (("on", "true"), ("off", "false")):
            platform = stack.enter_context(started_platform({"SLESS_GATEWAY_TRACING": flag}))
            tenant = onboard(admin_client(platform.url), "bench")
            deploy(tenant, "sless-bench", "hello", HELLO, {"concurrency": 16})
            url = f"{platform.url}/fn/sless-bench/hello"
            load(url, args.calls // 4, args.connections)  # warm: workers up, code paths hot
            urls[mode] = (platform, url)
        for run in range(args.runs):
            # alternate which goes first: a drift of the machine's load falls on both
            order = ("on", "off") if run % 2 == 0 else ("off", "on")
            for mode in order:
                platform, url = urls[mode]
                figure = cpu_per_call_us(platform, url, args.calls, args.connections)
                samples[mode].append(figure)
                print(f"run {run + 1} tracing {mode}: {figure:.1f} us CPU/call", file=sys.stderr)
    return [
        row(
            "gateway CPU per warm call, tracing on (no exporter)",
            samples["on"],
            "us",
            baseline=samples["off"],
            baseline_name="tracing off",
            target="ratio < 1.05",
        )
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calls", type=int, default=3000, help="calls per load run")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="repetitions of every figure")
    add_arguments(parser)
    print(render(rows(parser.parse_args())))


if __name__ == "__main__":
    main()

"""Density: the gateway with many functions deployed and many warm, against one function.

One platform (`sless up`); the functions belong to tenants of 50 (the default quota).
First the baseline: one function deployed and warm,
wrk at 16 connections on it (``--runs`` times), the gateway's RSS. Then ``--functions``
functions in all (same code: one build, as a provider hosting many copies of one app
would have it) of which ``--warm`` get a call each and keep their worker, and the same wrk
load spread over the warm ones round-robin (a wrk Lua script), the gateway's RSS again.

Every function has ``concurrency`` 16, so that one worker takes the whole load in both
cases and what differs is only what the gateway holds: 500 functions in its index, 100
pools with their keep-alive clients, 100 workers to reap. Semgrep is off: validation is
not what is measured.

    uv run python bench/density.py [--runs 3] [--functions 500] [--warm 100]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import tempfile
import time
from pathlib import Path

import httpx
from invoke import wrk
from platform_process import admin_client, deploy, onboard, started_platform
from table import Row, note, row

HANDLER = "def handle(event, context):\n    return {'function': context.function}\n"
SPEC = {"concurrency": 16}
#: the default quota of functions per tenant (SLESS_LIMITS_MAX_FUNCTIONS)
PER_TENANT = 50


def _paths_script(paths: list[str], directory: Path) -> Path:
    script = directory / "paths.lua"
    quoted = ", ".join(f'"{p}"' for p in paths)
    script.write_text(
        f"local paths = {{{quoted}}}\nlocal i = 0\n"
        "request = function()\n"
        "  i = i % #paths + 1\n"
        '  return wrk.format("GET", paths[i])\n'
        "end\n"
    )
    return script


def _load(base: str, paths: list[str], runs: int, duration_s: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="sless-wrk-") as tmp:
        script = _paths_script(paths, Path(tmp))
        return [wrk(base, 16, duration_s, script=script)["p99"] for _ in range(runs)]


def rows(args: argparse.Namespace) -> list[Row]:
    env = {"SLESS_VALIDATION_STATIC_ENABLED": "false"}
    with started_platform(env) as platform:
        admin = admin_client(platform.url)
        # a tenant may have PER_TENANT functions (the default quota): spread them
        tenants = [onboard(admin, f"dense{t}") for t in range(-(-args.functions // PER_TENANT))]
        files = {"handler.py": HANDLER}

        def place(i: int) -> tuple[httpx.Client, str, str]:
            t = i % len(tenants)
            return tenants[t], f"sless-dense{t}", f"f{i}"

        def path(i: int) -> str:
            _, namespace, name = place(i)
            return f"/fn/{namespace}/{name}"

        deploy(*place(0), files, SPEC)
        httpx.get(platform.url + path(0)).raise_for_status()
        one_p99 = _load(platform.url, [path(0)], args.runs, args.duration)
        one_rss = [platform.rss_mb()]
        note(f"  1 function: p99 {one_p99} ms, gateway RSS {one_rss[0]:.0f} MB")

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: deploy(*place(i), files, SPEC), range(1, args.functions)))
        note(
            f"  deployed {args.functions} functions of {len(tenants)} tenants in "
            f"{time.monotonic() - started:.0f} s"
        )
        warm = [path(i) for i in range(args.warm)]
        with httpx.Client(base_url=platform.url, timeout=120) as client:
            for path in warm:
                client.get(path).raise_for_status()
        many_p99 = _load(platform.url, warm, args.runs, args.duration)
        many_rss = [platform.rss_mb()]
        note(
            f"  {args.functions} functions, {args.warm} warm: p99 {many_p99} ms, "
            f"gateway RSS {many_rss[0]:.0f} MB"
        )
        for client in (*tenants, admin):
            client.close()
    label = f"{args.functions} functions, {args.warm} warm"
    return [
        row(
            f"{label}: gateway p99 at 16 connections",
            many_p99,
            "ms",
            baseline=one_p99,
            baseline_name="1 function",
            target="ratio <= 1.2",
        ),
        row(
            f"{label}: gateway RSS",
            many_rss,
            "MB",
            baseline=one_rss,
            baseline_name="1 function",
        ),
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--functions", type=int, default=500, help="functions deployed")
    parser.add_argument("--warm", type=int, default=100, help="of which called and kept warm")


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every figure")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    add_arguments(parser)
    print(render(rows(parser.parse_args())))

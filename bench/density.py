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

The same two loads also go through nginx in front of the same worker sockets (one
upstream per function, an exact location per path), in turns with the gateway's runs: how
much of the growth is the 100 worker processes themselves on the machine's cores, which a
proxy cannot change, and how much is the gateway's.

    uv run python bench/density.py [--runs 3] [--functions 500] [--warm 100]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import tempfile
import time
from pathlib import Path

import httpx
from invoke import ask_worker, start_nginx_routes, wrk
from platform_process import admin_client, deploy, free_port, onboard, started_platform
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


def _function_of(path: Path) -> str | None:
    """The function a worker socket serves (the handler answers its name); None for a
    generic pre-started worker."""
    body = ask_worker(path)
    return None if body is None else str(json.loads(body)["function"])


def _sockets_by_path(sockets: list[Path], paths: dict[str, str]) -> dict[str, list[Path]]:
    """The worker sockets of the functions ``paths`` names (function name: its
    invocation path), by path."""
    found: dict[str, list[Path]] = {path: [] for path in paths.values()}
    for sock in sockets:
        name = _function_of(sock)
        if name in paths:
            found[paths[name]].append(sock)
    missing = [path for path, socks in found.items() if not socks]
    if missing:
        raise SystemExit(f"no worker socket answers for {missing[:3]}...")
    return found


def _load(
    base: str, sockets: dict[str, list[Path]], runs: int, duration_s: int
) -> tuple[list[float], list[float]]:
    """p99 of wrk at 16 connections spread over the paths of ``sockets``, ``runs`` times
    on the gateway and, in turns, on nginx in front of the same worker sockets."""
    gateway: list[float] = []
    nginx: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sless-wrk-") as tmp:
        script = _paths_script(list(sockets), Path(tmp))
        port = free_port()
        proxy = start_nginx_routes(sockets, Path(tmp), port)
        try:
            for _ in range(runs):
                gateway.append(wrk(base, 16, duration_s, script=script)["p99"])
                nginx.append(wrk(f"http://127.0.0.1:{port}", 16, duration_s, script=script)["p99"])
        finally:
            proxy.terminate()
            proxy.wait(10)
    return gateway, nginx


def rows(args: argparse.Namespace) -> list[Row]:
    # validation is not what is measured (its detonation stage can hold code for review
    # on a loaded machine, and a held function is never served)
    env = {
        "SLESS_VALIDATION_STATIC_ENABLED": "false",
        "SLESS_VALIDATION_DETONATION_ENABLED": "false",
    }
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
        one_sockets = _sockets_by_path(platform.worker_sockets(), {place(0)[2]: path(0)})
        one_p99, one_nginx = _load(platform.url, one_sockets, args.runs, args.duration)
        one_rss = [platform.rss_mb()]
        note(
            f"  1 function: p99 {one_p99} ms (nginx {one_nginx} ms),"
            f" gateway RSS {one_rss[0]:.0f} MB"
        )

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: deploy(*place(i), files, SPEC), range(1, args.functions)))
        note(
            f"  deployed {args.functions} functions of {len(tenants)} tenants in "
            f"{time.monotonic() - started:.0f} s"
        )
        warm = [path(i) for i in range(args.warm)]
        with httpx.Client(base_url=platform.url, timeout=120) as client:
            for target in warm:
                client.get(target).raise_for_status()
        many_sockets = _sockets_by_path(
            platform.worker_sockets(), {place(i)[2]: path(i) for i in range(args.warm)}
        )
        many_p99, many_nginx = _load(platform.url, many_sockets, args.runs, args.duration)
        many_rss = [platform.rss_mb()]
        note(
            f"  {args.functions} functions, {args.warm} warm: p99 {many_p99} ms"
            f" (nginx {many_nginx} ms), gateway RSS {many_rss[0]:.0f} MB"
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
            f"{label}: nginx p99, same workers",
            many_nginx,
            "ms",
            baseline=one_nginx,
            baseline_name="nginx, 1 function",
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

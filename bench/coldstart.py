"""Cold start in embedded mode, with the pre-started pool and without it, same run.

Starts a real platform (`sless up`) four times: with ``SLESS_SANDBOX_PRESTART_SIZE=2`` (the
default), with ``0``, and both again without the workers' seccomp filter
(``SLESS_SANDBOX_SECCOMP=false``, a setting that exists for this comparison and is refused
in production): the filter's cost is the ratio of each run to its unfiltered twin. In each
it deploys ``--runs`` functions and measures:

- the first call after deploy of each function (a worker must be made);
- warm calls of the same function (the baseline: what a call costs once a worker runs);
- the first call after idle reaping: the idle timeout is 1 s, the reaper runs every 5 s,
  so after 7.5 s idle the worker is gone. Each handler returns an id made when it was
  imported, so a sample that met the old worker is seen and not counted.

Calls go through the gateway on one keep-alive connection. Between two cold calls the
bench waits 1 s, so that the pool has refilled (the pool starts one generic worker at a
time, about 150 ms each here). Semgrep is off: validation is not what is measured.

    uv run python bench/coldstart.py [--runs 3]
"""

from __future__ import annotations

import argparse
import time

import httpx
from platform_process import admin_client, deploy, onboard, started_platform
from table import Row, median, note, row

HANDLER = "import uuid\nBOOT = uuid.uuid4().hex\n\n\ndef handle(event, context):\n    return BOOT\n"
#: idle timeout + the reaper's interval (LocalBackend._REAP_INTERVAL_S) + margin
REAPED_AFTER_S = 1 + 5 + 1.5


def _timed(client: httpx.Client, path: str) -> tuple[float, str]:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def measure(prestart: int, runs: int, *, seccomp: bool = True) -> dict[str, list[float]]:
    env = {
        "SLESS_SANDBOX_PRESTART_SIZE": str(prestart),
        "SLESS_SANDBOX_IDLE_TIMEOUT_S": "1",
        "SLESS_SANDBOX_SECCOMP": str(seccomp).lower(),
        "SLESS_VALIDATION_STATIC_ENABLED": "false",
    }
    figures: dict[str, list[float]] = {"deploy": [], "reaped": [], "warm": []}
    with started_platform(env) as platform:
        admin = admin_client(platform.url)
        tenant = onboard(admin, "cold")
        names = [f"cold{i}" for i in range(runs)]
        for name in names:
            deploy(tenant, "sless-cold", name, {"handler.py": HANDLER}, {})
        calls = httpx.Client(base_url=platform.url, timeout=60)
        boots = {}
        for name in names:
            time.sleep(1.0)
            cold, boots[name] = _timed(calls, f"/fn/sless-cold/{name}")
            figures["deploy"].append(cold)
            warm = [_timed(calls, f"/fn/sless-cold/{name}")[0] for _ in range(20)]
            figures["warm"].append(median(warm))
        time.sleep(REAPED_AFTER_S)
        for name in names:
            time.sleep(1.0)
            cold, boot = _timed(calls, f"/fn/sless-cold/{name}")
            if boot == boots[name]:
                note(f"  {name}: the worker was not reaped yet; sample left out")
                continue
            figures["reaped"].append(cold)
        for client in (calls, tenant, admin):
            client.close()
    label = f"prestart={prestart}" + ("" if seccomp else ", seccomp off")
    note(f"{label}: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    return figures


def rows(args: argparse.Namespace) -> list[Row]:
    pooled = measure(2, args.runs)
    direct = measure(0, args.runs)
    unfiltered = measure(2, args.runs, seccomp=False)
    direct_unfiltered = measure(0, args.runs, seccomp=False)
    out = []
    for label, figures in (("pool", pooled), ("no pool", direct)):
        for key, what in (("deploy", "first call after deploy"), ("reaped", "after idle reaping")):
            if figures[key]:
                out.append(
                    row(
                        f"cold start p50, {what} ({label})",
                        figures[key],
                        "ms",
                        baseline=figures["warm"],
                        baseline_name="warm call",
                        target="<= 50 ms" if label == "pool" else "",
                    )
                )
    return (
        out
        + _seccomp_rows(pooled, unfiltered, "pool")
        + _seccomp_rows(direct, direct_unfiltered, "no pool")
    )


def _seccomp_rows(
    filtered: dict[str, list[float]], unfiltered: dict[str, list[float]], label: str
) -> list[Row]:
    """What the seccomp filter costs: the same figures with it and without it."""
    out = []
    for key, what in (
        ("deploy", f"cold start p50, first call after deploy ({label})"),
        ("reaped", f"cold start p50, after idle reaping ({label})"),
        ("warm", f"warm call p50 ({label})"),
    ):
        if filtered[key] and unfiltered[key]:
            out.append(
                row(
                    f"{what}, seccomp filter on",
                    filtered[key],
                    "ms",
                    baseline=unfiltered[key],
                    baseline_name="seccomp off",
                )
            )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own."""


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every figure")
    print(render(rows(parser.parse_args())))

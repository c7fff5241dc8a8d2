"""Every benchmark's rows in one table: ``scripts/bench [--runs 3] [--only invoke,...]``.

Each module of ``MODULES`` has ``rows(args) -> list[table.Row]`` and
``add_arguments(parser)`` for its own options; this collects their rows and prints one
Markdown table (measure, figure, baseline, ratio, target, every run's figure) on stdout.
Details of every run go to stderr. To add rows, write such a module and list it here.
A listed module without ``rows`` (an older benchmark that prints its own figures) runs as
a script, with its output on stderr, until it grows one.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import time

from table import Row, note, render

#: in the order they run; names of modules next to this file
MODULES = [
    "coldstart",
    "invoke",
    "memory",
    "density",
    "validation",
    "history",
    "runtime_sandbox",
    "isolation",
    "interfaces",
    "cli_start",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every figure")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    parser.add_argument(
        "--only", default=",".join(MODULES), help=f"comma-separated subset of {MODULES}"
    )
    modules = []
    for name in MODULES:
        module = importlib.import_module(name)
        if hasattr(module, "add_arguments"):
            module.add_arguments(parser)
        modules.append((name, module))
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    unknown = wanted - set(MODULES)
    if unknown:
        sys.exit(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    rows: list[Row] = []
    for name, module in modules:
        if name not in wanted:
            continue
        started = time.monotonic()
        note(f"==> {name}")
        if hasattr(module, "rows"):
            rows += module.rows(args)
        else:
            subprocess.run([sys.executable, f"{name}.py"], stdout=sys.stderr, check=True)
        note(f"    ({time.monotonic() - started:.0f} s)")
    print(render(rows))


if __name__ == "__main__":
    main()

"""Start time of the ``sless`` command for client-side commands (issue 31: ≤ 0.25 s).

Each figure is the median wall time of 7 runs of a real ``sless`` process, from exec to
exit, with Python's bytecode cache on (as a user's installation has it); the baseline is
the bare interpreter (``python -c pass``) measured in the same run, so the ratio is what
the command adds. ``whoami`` runs against a closed loopback port: it reads the config,
builds a client and fails to connect, which is all of a client command but the network.

    scripts/bench --only cli_start
    uv run python bench/cli_start.py
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from table import Row, note, render, row

SLESS = str(Path(sys.executable).parent / "sless")
TARGET_S = 0.25
REPEATS = 7


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's start reads cached bytecode
    env.update(SLESS_URL=f"http://127.0.0.1:{_closed_port()}", SLESS_TOKEN="sl_t_bench")
    return env


def _seconds(command: list[str], env: dict[str, str]) -> float:
    subprocess.run(command, env=env, capture_output=True, check=False)  # warm the caches
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=False)
        samples.append(time.perf_counter() - started)
    return sorted(samples)[REPEATS // 2]


COMMANDS = {
    "sless --help": [SLESS, "--help"],
    "sless deploy --help": [SLESS, "deploy", "--help"],
    "sless whoami (no server)": [SLESS, "whoami"],
    "sless ls (no server)": [SLESS, "ls"],
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options of its own


def rows(args: argparse.Namespace) -> list[Row]:
    env = _environment()
    bare = [_seconds([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
    result = []
    for name, command in COMMANDS.items():
        samples = [_seconds(command, env) for _ in range(args.runs)]
        note(f"cli_start: {name}: {', '.join(f'{s:.3f}' for s in samples)} s")
        result.append(
            row(
                f"start of {name}",
                samples,
                "s",
                baseline=bare,
                baseline_name="python -c pass",
                target=f"<= {TARGET_S} s",
            )
        )
    return result


if __name__ == "__main__":
    print(render(rows(argparse.Namespace(runs=3))))

"""Idle warm worker memory (PSS), against a bare interpreter in the same sandbox.

For each runtime: a worker started as the platform starts one (``start_worker``, a hello
handler, bubblewrap with every limit), idle for a second after one call; and a baseline,
the same bubblewrap command line whose interpreter runs only ``python3 -c`` / ``node -e``
(a sleep). The figure is the PSS of the interpreter process (``/proc/<pid>/smaps_rollup``;
bubblewrap's own two processes add about 1 MB to both and are left out).

PSS divides a shared page between the processes that map it. An interpreter's own binary
is most of its PSS when it runs alone (Node.js: 32 MB of /usr/bin/node's text), and is
shared by every worker of the runtime on a busy host, so each figure is measured twice:
one worker alone, and the mean of four running at once.

    uv run python bench/memory.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import subprocess
import time
from pathlib import Path

import aiohttp
from runtime_sandbox import bench_root, make_spec
from table import Row, note, row

from sless.sandbox import (
    HostLayout,
    Runtime,
    SandboxSpec,
    build_command,
    default_runtimes_dir,
    start_worker,
)

BARE = {
    "python3.11": ["-c", "import time; time.sleep(60)"],
    "nodejs20": ["-e", "setTimeout(() => {}, 60000)"],
}
TARGET = {"python3.11": "<= 12 MB", "nodejs20": "<= 30 MB"}


def _spec(root: Path, runtime: Runtime) -> SandboxSpec:
    # the hello handler of runtime_sandbox.py, named like a function's worker
    return dataclasses.replace(make_spec(root, runtime), function="mem", namespace="bench")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _interpreter_pss_mb(bwrap_pid: int, runtime: Runtime) -> float:
    """PSS of the interpreter below bubblewrap (bwrap -> bwrap init -> interpreter)."""
    binary = "node" if runtime == "nodejs20" else "python3"
    todo = [bwrap_pid]
    while todo:
        pid = todo.pop()
        try:
            exe = Path(f"/proc/{pid}/exe").resolve().name
        except OSError:
            exe = ""
        if exe.startswith(binary):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
        todo += _children(pid)
    raise RuntimeError(f"no {binary} process below {bwrap_pid}")


async def _warm_workers_pss(root: Path, runtime: Runtime, count: int) -> float:
    """Mean PSS of ``count`` idle warm workers running at once."""
    workers = [
        await start_worker(_spec(root, runtime), runtimes_dir=default_runtimes_dir())
        for _ in range(count)
    ]
    try:
        for worker in workers:
            connector = aiohttp.UnixConnector(path=str(worker.socket_path))
            async with (
                aiohttp.ClientSession(connector=connector) as session,
                session.post("http://w/", json={"a": 1}) as response,
            ):
                await response.read()
        await asyncio.sleep(1.5)
        return sum(_interpreter_pss_mb(w.pid, runtime) for w in workers) / count
    finally:
        for worker in workers:
            await worker.stop()


def _bare_pss(root: Path, runtime: Runtime, count: int) -> float:
    """Mean PSS of ``count`` bare interpreters, in the same sandbox, running at once."""
    processes = []
    try:
        for _ in range(count):
            spec = _spec(root, runtime)
            spec.socket_dir.mkdir(parents=True)
            argv = list(
                build_command(
                    spec,
                    runtimes_dir=default_runtimes_dir(),
                    bwrap="bwrap",
                    unsafe_no_sandbox=False,
                    host=HostLayout.discover(),
                ).argv
            )
            # keep bubblewrap, prlimit and the interpreter with its flags; replace the server
            server = next(i for i, a in enumerate(argv) if a.startswith("/runtime/"))
            argv = argv[:server] + BARE[runtime]
            processes.append(subprocess.Popen(argv, env={}, start_new_session=True))
        time.sleep(2.5)
        return sum(_interpreter_pss_mb(p.pid, runtime) for p in processes) / count
    finally:
        for process in processes:
            process.kill()
            process.wait()


def rows(args: argparse.Namespace) -> list[Row]:
    out = []
    with bench_root() as root:
        for runtime in ("python3.11", "nodejs20"):
            for count in (1, 4):
                worker = [
                    asyncio.run(_warm_workers_pss(root, runtime, count)) for _ in range(args.runs)
                ]
                bare = [_bare_pss(root, runtime, count) for _ in range(args.runs)]
                note(f"  {runtime} x{count}: worker {worker} MB, bare {bare} MB")
                out.append(
                    row(
                        f"idle warm worker PSS, {runtime}, "
                        + ("alone" if count == 1 else f"one of {count} running"),
                        worker,
                        "MB",
                        baseline=bare,
                        baseline_name="bare interpreter",
                        target=TARGET[runtime],
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

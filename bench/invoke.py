"""The gateway's invocation path under wrk, against nginx in front of the same workers.

Starts a real platform (`sless up`: embedded PostgreSQL, bubblewrap workers), deploys
examples/hello-python with ``concurrency`` 16, then:

1. warms up: wrk at the highest connection count, so the gateway starts every worker it
   starts under load (up to 4 per function);
2. finds the function's worker sockets (all of them: generic pre-started workers, which
   do not speak HTTP, are left out) and starts nginx (one worker process, like the
   gateway's one process) with all of them as a keep-alive upstream;
3. ``--runs`` times, for each connection count: wrk on the gateway, then wrk on nginx;
4. added latency: wrk speaks only TCP and the workers listen on Unix sockets, so one
   compiled keep-alive HTTP/1.1 client (bench/loadgen, Go, built here) measures p50 at 16
   connections paced to ``--added-rate`` requests/s in all (400: below what any of the
   three saturates at, so the figure is the path's latency, not queueing) three ways in
   each run: straight to the worker sockets, through the gateway, through nginx. A
   proxy's added latency is its p50 minus the direct p50 (same client, same run).

A third proxy runs beside them in front of the same sockets: bench/minimal_proxy.py, the
gateway's server and HTTP/1.1 client with none of the platform's work per call. Its CPU per
call is the floor of a Python proxy built this way; the gateway's minus it is what the
platform itself spends per call (authentication, limits, header rules, record, journal,
metrics). A fourth, bench/frontsketch (Go, standard library only, built here), does that
per-call work the cheap way a compiled front would (a map lookup for the route, the token
hashed and looked up, an atomic in-flight count, an invocation id, both header copies
without the hop-by-hop ones, a counter, a latency bucket and one journal line per call
with one ``write(2)``) and relays over keep-alive connections: its CPU per call is what
a compiled front for ``/fn`` would cost here, the direction docs/PERFORMANCE.md discusses.
Two more are Python without an ASGI server (bench/protocol_proxy.py: an
``asyncio.Protocol`` on uvloop, httptools, all on the loop's one thread): alone, the
floor of a protocol-level front; with ``--work``, that floor plus the platform's per-call
work done by the platform's own code (header rules, request encoding, invocation id,
metrics, the record and its journal line): what a protocol-level invoke path would cost;
with ``--work-cheap``, the same steps written for that path (one pass over the parsed
bytes, plain counters, the record as a tuple): what the work costs designed for it.

Rows: p99 and throughput at every connection count, gateway against nginx; the CPU per
call of each (``/proc/<pid>/task/*/stat`` utime+stime of every thread of the gateway
process, or of nginx's master and worker, over its wrk run, divided by the requests wrk
completed), with the gateway's CPU split by thread on stderr (the event loop, granian's
Rust threads, the log pump...); and the added p50 latency at 16 connections. Needs wrk
and nginx (scripts/bench installs them) and go.

    uv run python bench/invoke.py [--runs 3] [--duration 10] [--connections 16,64]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from platform_process import ROOT, admin_client, deploy, free_port, onboard, started_platform
from table import Row, median, note, row

_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}
_REQUEST = b"GET / HTTP/1.1\r\nHost: worker\r\nConnection: close\r\n\r\n"


def cpu_by_thread(pids: list[int]) -> dict[str, float]:
    """CPU seconds (user + system) used so far by ``pids``: their main threads (the
    gateway's event loop) as ``"main"``, every other thread (granian's Rust threads, the
    log pump, executors) as ``"threads"``."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {"main": 0.0, "threads": 0.0}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                stat = (task / "stat").read_text()
            except OSError:  # the thread ended meanwhile
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            kind = "main" if task.name == str(pid) else "threads"
            used[kind] += (int(fields[11]) + int(fields[12])) / ticks
    return used


def cpu_per_call(
    groups: dict[str, list[int]], run: Callable[[], dict[str, float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """``run()`` (a wrk run), and the CPU ms per call each group of processes spent
    meanwhile: ``"<group>"`` in all, ``"<group>.main"`` and ``"<group>.threads"``."""
    before = {group: cpu_by_thread(pids) for group, pids in groups.items()}
    result = run()
    calls = result["requests"]
    per_call: dict[str, float] = {}
    for group, pids in groups.items():
        after = cpu_by_thread(pids)
        for kind, spent in after.items():
            per_call[f"{group}.{kind}"] = (spent - before[group][kind]) * 1000 / calls
        per_call[group] = sum(per_call[f"{group}.{kind}"] for kind in after)
    return result, per_call


def wrk(
    url: str, connections: int, duration_s: int, *, script: Path | None = None
) -> dict[str, float]:
    """p50/p99 in ms, requests/s and requests completed of one wrk run (2 threads: the
    machine's 2 cores)."""
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration_s}s", "--latency"]
    if script is not None:
        command += ["-s", str(script)]
    command.append(url)
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures = {}
    for label, key in (("50%", "p50"), ("99%", "p99")):
        match = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        if match is None:
            raise RuntimeError(f"no {label} in wrk's output:\n{out}")
        figures[key] = float(match.group(1)) * _UNITS[match.group(2)]
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.MULTILINE)
    if rps is None:
        raise RuntimeError(f"no Requests/sec in wrk's output:\n{out}")
    figures["rps"] = float(rps.group(1))
    total = re.search(r"^\s*(\d+) requests in", out, re.MULTILINE)
    if total is None:
        raise RuntimeError(f"no request count in wrk's output:\n{out}")
    figures["requests"] = float(total.group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        note(f"  wrk {url}: {errors.group(1)} non-2xx answers")
    return figures


def ask_worker(path: Path) -> bytes | None:
    """The body of a worker socket's 200 answer to ``GET /``; None for a generic
    pre-started worker, which waits for its specialization and answers nothing (it drops
    what it cannot parse)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        try:
            sock.connect(str(path))
            sock.sendall(_REQUEST)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        except OSError:
            return None
    if not data.startswith(b"HTTP/1.1 200"):
        return None
    return data.split(b"\r\n\r\n", 1)[1]


def start_nginx(sockets: list[Path], workdir: Path, port: int) -> subprocess.Popen[bytes]:
    """nginx on ``port`` proxying every path to ``sockets`` (one keep-alive upstream)."""
    return start_nginx_routes({"/": sockets}, workdir, port)


def start_nginx_routes(
    routes: dict[str, list[Path]], workdir: Path, port: int
) -> subprocess.Popen[bytes]:
    """nginx on ``port`` (one worker process, like the gateway's one process): each
    location of ``routes`` ("/" for every path, else an exact path) proxies to its own
    keep-alive upstream of worker sockets."""
    nginx = shutil.which("nginx")
    if nginx is None:
        sys.exit("nginx is not installed (apt-get install nginx-light)")
    upstreams = []
    locations = []
    for i, (location, sockets) in enumerate(routes.items()):
        servers = "".join(f"server unix:{path}; " for path in sockets)
        upstreams.append(
            f"  upstream w{i} {{ {servers}keepalive 128; keepalive_requests 1000000; }}\n"
        )
        match = "" if location == "/" else "= "
        locations.append(
            f"    location {match}{location} {{ proxy_pass http://w{i}; proxy_http_version 1.1;\n"
            '      proxy_set_header Connection ""; }\n'
        )
    conf = workdir / "nginx.conf"
    conf.write_text(
        "worker_processes 1; pid nginx.pid; error_log stderr error; daemon off;\n"
        # the worker sockets are in a root-only directory when sless runs as root
        + ("user root;\n" if os.geteuid() == 0 else "")
        + "events { worker_connections 4096; }\n"
        # no cap on requests per keep-alive connection (nginx closes both sides after
        # 1000 by default; the gateway never does)
        "http { access_log off; keepalive_requests 1000000;\n"
        + "".join(upstreams)
        + f"  server {{ listen 127.0.0.1:{port};\n"
        + "".join(locations)
        + "  } }\n"
    )
    process = subprocess.Popen([nginx, "-p", str(workdir), "-c", str(conf)])
    probe = f"http://127.0.0.1:{port}{next(iter(routes))}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            httpx.get(probe)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    sys.exit("nginx did not start")


def start_python_proxy(
    script: str, sockets: list[Path], port: int, *options: str
) -> subprocess.Popen[bytes]:
    """bench/``script`` on ``port`` in front of ``sockets``, once it answers."""
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / script), *options, str(port)]
        + [str(path) for path in sockets],
        stderr=subprocess.DEVNULL,
    )
    return _answering(process, port, script)


def start_frontsketch(
    binary: Path, sockets: list[Path], port: int, journal: Path
) -> subprocess.Popen[bytes]:
    """bench/frontsketch on ``port`` in front of ``sockets``, once it answers."""
    process = subprocess.Popen(
        [str(binary), "-listen", f"127.0.0.1:{port}", "-journal", str(journal)]
        + [f"unix:{path}" for path in sockets],
        stderr=subprocess.DEVNULL,
    )
    return _answering(process, port, "the compiled front sketch")


def _answering(process: subprocess.Popen[bytes], port: int, name: str) -> subprocess.Popen[bytes]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/")
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    sys.exit(f"{name} did not start")


def nginx_pids(master: int) -> list[int]:
    """nginx's master process and its worker(s)."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [master, *(int(c) for c in children)]


def build_go(name: str, workdir: Path) -> Path:
    """bench/``name`` (Go, standard library only) built into ``workdir``."""
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        sys.exit(f"go is not installed (needed to build bench/{name}; apt-get install golang-go)")
    binary = workdir / name
    subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=Path(__file__).parent / name,
        env={**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "CGO_ENABLED": "0"},
        check=True,
    )
    return binary


def loadgen(
    binary: Path, targets: list[str], path: str, connections: int, rate: float, s: float
) -> dict[str, float]:
    """p50/p99 (ms) and requests/s of one bench/loadgen run."""
    command = [str(binary), "-c", str(connections), "-d", f"{s}s", "-rate", str(rate)]
    out = subprocess.run(
        [*command, "-path", path, *targets],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out)
    if result["errors"]:
        note(f"  loadgen {targets[0]}...: {result['errors']} failed exchanges")
    return result


def _added_latency(
    binary: Path,
    url_path: str,
    gateway_port: int,
    nginx_port: int,
    sockets: list[Path],
    rate: float,
) -> dict[str, float]:
    """p50 at 16 connections paced to ``rate`` requests/s in all, of the same compiled
    client: straight to the worker sockets, through the gateway, through nginx."""
    return {
        "direct": loadgen(binary, [f"unix:{p}" for p in sockets], "/", 16, rate, 5)["p50"],
        "gateway": loadgen(binary, [f"tcp:127.0.0.1:{gateway_port}"], url_path, 16, rate, 5)["p50"],
        "nginx": loadgen(binary, [f"tcp:127.0.0.1:{nginx_port}"], "/", 16, rate, 5)["p50"],
    }


def measure(
    runs: int, duration_s: int, connections: list[int], env: dict[str, str], added_rate: float
) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}
    with (
        started_platform(env) as platform,
        tempfile.TemporaryDirectory(prefix="sless-nginx-") as work,
    ):
        admin = admin_client(platform.url)
        tenant = onboard(admin, "bench")
        code = {p.name: p.read_text() for p in (ROOT / "examples/hello-python").iterdir()}
        deploy(tenant, "sless-bench", "hello", code, {"concurrency": 16})
        url = f"{platform.url}/fn/sless-bench/hello"
        wrk(url, max(connections), 5)
        sockets = [p for p in platform.worker_sockets() if ask_worker(p) is not None]
        note(f"  {len(sockets)} worker sockets of the function; nginx gets all of them")
        port = free_port()
        binary = build_go("loadgen", Path(work))
        nginx = start_nginx(sockets, Path(work), port)
        nginx_url = f"http://127.0.0.1:{port}/"
        floor_port = free_port()
        floor = start_python_proxy("minimal_proxy.py", sockets, floor_port)
        protocol_port = free_port()
        protocol = start_python_proxy("protocol_proxy.py", sockets, protocol_port)
        lean_port = free_port()
        lean = start_python_proxy(
            "protocol_proxy.py", sockets, lean_port, "--work", str(Path(work) / "lean-journal")
        )
        cheap_port = free_port()
        cheap = start_python_proxy(
            "protocol_proxy.py",
            sockets,
            cheap_port,
            "--work-cheap",
            str(Path(work) / "cheap-journal"),
        )
        sketch_port = free_port()
        sketch = start_frontsketch(
            build_go("frontsketch", Path(work)), sockets, sketch_port, Path(work) / "journal"
        )
        targets = (
            ("gateway", url),
            ("nginx", nginx_url),
            ("floor", f"http://127.0.0.1:{floor_port}/"),
            ("protocol", f"http://127.0.0.1:{protocol_port}/"),
            ("lean", f"http://127.0.0.1:{lean_port}/"),
            ("cheap", f"http://127.0.0.1:{cheap_port}/"),
            ("sketch", f"http://127.0.0.1:{sketch_port}/"),
        )
        try:
            for run in range(runs):
                for c in connections:
                    for name, target in targets:
                        # while nginx carries the calls the platform still spends CPU on
                        # them (the log pump carries the workers' lines; the guard runs)
                        result, cpu = cpu_per_call(
                            {
                                "gateway": [platform.pid],
                                "nginx": nginx_pids(nginx.pid),
                                "floor": [floor.pid],
                                "protocol": [protocol.pid],
                                "lean": [lean.pid],
                                "cheap": [cheap.pid],
                                "sketch": [sketch.pid],
                            },
                            lambda t=target, c=c: wrk(t, c, duration_s),
                        )
                        note(f"  run {run + 1} {name:7s} c={c:<3d} {result}")
                        note(
                            "    CPU ms per call: "
                            + ", ".join(f"{k} {v:.3f}" for k, v in cpu.items())
                        )
                        result["cpu"] = cpu[name]
                        for key, value in result.items():
                            figures.setdefault(f"{name}.{c}.{key}", []).append(value)
                gateway_port = int(platform.url.rsplit(":", 1)[1])
                added = _added_latency(
                    binary, "/fn/sless-bench/hello", gateway_port, port, sockets, added_rate
                )
                note(f"  run {run + 1} client p50 at 16 connections: {added}")
                for key, value in added.items():
                    figures.setdefault(f"client.{key}", []).append(value)
        finally:
            nginx.terminate()
            nginx.wait()
            for proxy in (floor, protocol, lean, cheap, sketch):
                proxy.terminate()
                proxy.wait()
        tenant.close()
        admin.close()
    return figures


#: the rows of the wrk runs, each at every connection count and against nginx's figure:
#: (proxy, its key in the figures, measure, figure, unit, target)
_WRK_ROWS = [
    ("gateway", "gateway", "p99", "p99", "ms", "ratio <= 1.5"),
    ("gateway", "gateway", "throughput", "rps", "req/s", "ratio >= 1.0"),
    ("gateway", "gateway", "CPU per call", "cpu", "ms", "<= 0.12 ms"),
    ("minimal Python proxy", "floor", "CPU per call", "cpu", "ms", "-"),
    ("minimal Python proxy", "floor", "throughput", "rps", "req/s", "-"),
    ("protocol-level Python proxy", "protocol", "CPU per call", "cpu", "ms", "-"),
    ("protocol-level Python proxy", "protocol", "throughput", "rps", "req/s", "-"),
    ("protocol-level proxy + the platform's work", "lean", "CPU per call", "cpu", "ms", "-"),
    ("protocol-level proxy + the platform's work", "lean", "throughput", "rps", "req/s", "-"),
    ("protocol-level proxy + the platform's work", "lean", "p99", "p99", "ms", "-"),
    ("protocol-level proxy + the work written for it", "cheap", "CPU per call", "cpu", "ms", "-"),
    ("protocol-level proxy + the work written for it", "cheap", "throughput", "rps", "req/s", "-"),
    ("protocol-level proxy + the work written for it", "cheap", "p99", "p99", "ms", "-"),
    ("compiled front sketch (Go)", "sketch", "CPU per call", "cpu", "ms", "-"),
    ("compiled front sketch (Go)", "sketch", "throughput", "rps", "req/s", "-"),
]


def rows(args: argparse.Namespace) -> list[Row]:
    connections = [int(c) for c in args.connections.split(",")]
    # the invocation path is measured, not validation (bench/validation.py): the
    # detonation stage holds examples/hello-python for review on a loaded machine (its
    # 1 s budget), and a held function is never served
    env = {"SLESS_VALIDATION_DETONATION_ENABLED": "false"}
    if args.http:
        env["SLESS_GATEWAY_HTTP"] = args.http
    f = measure(args.runs, args.duration, connections, env, args.added_rate)
    out = [
        row(
            f"{proxy} {measure} at {c} connections (wrk)",
            f[f"{key}.{c}.{figure}"],
            unit,
            baseline=f[f"nginx.{c}.{figure}"],
            baseline_name="nginx",
            target=target,
        )
        for proxy, key, measure, figure, unit, target in _WRK_ROWS
        for c in connections
    ]
    direct = f["client.direct"]
    added = [g - d for g, d in zip(f["client.gateway"], direct, strict=True)]
    nginx_added = [n - d for n, d in zip(f["client.nginx"], direct, strict=True)]
    note(f"  direct p50 at 16 connections (bench/loadgen): {median(direct):.2f} ms")
    out.append(
        row(
            "gateway added latency p50 at 16 connections",
            added,
            "ms",
            baseline=nginx_added,
            baseline_name="nginx's",
            target="<= nginx's",
        )
    )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--connections", default="16,64", help="wrk connection counts")
    parser.add_argument(
        "--added-rate",
        type=float,
        default=400,
        help="requests/s in all of the added-latency client at 16 connections (0: closed loop)",
    )
    parser.add_argument(
        "--http",
        choices=["granian", "httptools", "h11", "express"],
        help="the gateway's HTTP server (default: its own, SLESS_GATEWAY_HTTP)",
    )


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every figure")
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run")
    add_arguments(parser)
    print(render(rows(parser.parse_args())))

"""Invocation benchmark: the gateway against calling the worker's socket directly.

Starts a real platform (`sless up`: embedded PostgreSQL, bubblewrap workers) on a free
port, deploys examples/hello-python, then measures in the same run:

- cold start: the first invocation of the freshly deployed function (starts a worker);
- warm: latency p50/p99 and requests/s through ``/fn/...``;
- baseline: the same load straight to the worker's Unix socket (no gateway);
- reference proxy: nginx in front of the same worker socket (when nginx is installed),
  the figure a proxy in this position should be compared with.

Prints the figures and the gateway/direct ratios. Usage:
    uv run python bench/invoke.py [--requests 4000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import io
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

import aiohttp
import httpx
from platform_process import ROOT, admin_client, free_port, running_platform


def _zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.iterdir()):
            archive.write(path, path.name)
    return buffer.getvalue()


async def _load(
    session: aiohttp.ClientSession, url: str, requests: int, concurrency: int
) -> tuple[list[float], float, int]:
    latencies: list[float] = []
    errors = 0
    remaining = requests

    async def worker() -> None:
        nonlocal remaining, errors
        while remaining > 0:
            remaining -= 1
            started = time.perf_counter()
            async with session.get(url) as response:
                await response.read()
                if response.status != 200:
                    errors += 1
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return latencies, time.perf_counter() - started, errors


def _summary(name: str, latencies: list[float], elapsed: float, errors: int) -> dict[str, float]:
    q = statistics.quantiles(latencies, n=100)
    figures = {"p50": q[49], "p99": q[98], "rps": len(latencies) / elapsed}
    print(
        f"{name:<8} p50 {figures['p50']:7.2f} ms  p99 {figures['p99']:7.2f} ms"
        f"  {figures['rps']:8.0f} req/s  ({len(latencies)} requests, {errors} errors)"
    )
    return figures


async def _run(
    name: str, url: str, requests: int, concurrency: int, **kw: object
) -> dict[str, float]:
    async with aiohttp.ClientSession(**kw) as session:  # type: ignore[arg-type]
        await _load(session, url, 200, concurrency)  # warm-up
        return _summary(name, *await _load(session, url, requests, concurrency))


def _ratio(name: str, a: dict[str, float], b: dict[str, float]) -> None:
    print(
        f"ratio {name}: p50 x{a['p50'] / b['p50']:.2f}, p99 x{a['p99'] / b['p99']:.2f},"
        f" throughput x{a['rps'] / b['rps']:.2f}"
    )


def _start_nginx(socket_path: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    nginx = shutil.which("nginx")
    if nginx is None:
        print("nginx not installed: no reference proxy (apt-get install nginx-light)")
        return None
    port = free_port()
    conf = workdir / "nginx.conf"
    conf.write_text(
        "worker_processes 1; pid nginx.pid; error_log stderr error; daemon off;\n"
        # the worker socket is in a root-only directory when sless runs as root
        + ("user root;\n" if os.geteuid() == 0 else "")
        + "events { worker_connections 1024; }\n"
        "http { access_log off;\n"
        f"  upstream worker {{ server unix:{socket_path}; keepalive 32; }}\n"
        f"  server {{ listen 127.0.0.1:{port};\n"
        "    location / { proxy_pass http://worker; proxy_http_version 1.1;\n"
        '      proxy_set_header Connection ""; } } }\n'
    )
    process = subprocess.Popen([nginx, "-p", str(workdir), "-c", str(conf)])
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            httpx.get(url)
            return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    return None


async def _measure(
    url: str, socket_path: str, requests: int, concurrency: int, workdir: Path
) -> None:
    gateway = await _run("gateway", url, requests, concurrency)
    direct = await _run(
        "direct",
        "http://worker/",
        requests,
        concurrency,
        connector=aiohttp.UnixConnector(path=socket_path),
    )
    _ratio("gateway/direct", gateway, direct)
    started = _start_nginx(socket_path, workdir)
    if started is not None:
        process, nginx_url = started
        try:
            nginx = await _run("nginx", nginx_url, requests, concurrency)
        finally:
            process.terminate()
            process.wait()
        _ratio("gateway/nginx", gateway, nginx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    with running_platform() as url, tempfile.TemporaryDirectory(prefix="sless-nginx-") as work:
        admin = admin_client(url)
        token = admin.post("/v1/admin/tenants", json={"name": "bench"}).json()["token"]
        tenant = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"})
        path = "/v1/namespaces/sless-bench/functions/hello"
        tenant.put(path, json={"concurrency": args.concurrency}).raise_for_status()
        tenant.post(
            path + "/upload", content=_zip(ROOT / "examples/hello-python")
        ).raise_for_status()
        while tenant.get(path).json()["status"]["phase"] != "Ready":
            time.sleep(0.05)
        started = time.perf_counter()
        first = httpx.get(f"{url}/fn/sless-bench/hello", timeout=60)
        cold = (time.perf_counter() - started) * 1000
        print(f"cold start (first invocation after deploy): {cold:.0f} ms ({first.status_code})")
        sockets = glob.glob("/tmp/sless-run-*/*/worker.sock")
        sockets.sort(key=os.path.getmtime)
        asyncio.run(
            _measure(
                f"{url}/fn/sless-bench/hello",
                sockets[-1],
                args.requests,
                args.concurrency,
                Path(work),
            )
        )
        admin.close()
        tenant.close()


if __name__ == "__main__":
    main()

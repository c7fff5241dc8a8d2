"""Each handler interface against the ``sless`` contract, same run: cold start (start the
sandboxed worker + first call, not pre-started) and warm call p50 (issue 33).

    uv run python bench/interfaces.py [--runs 3] [--calls 200]

For each runtime and interface, ``--runs`` times, a trivial handler written to that
contract (answering a small JSON object) runs in a bubblewrap worker as a tenant's uid:
cold is ``start_worker`` until the socket accepts plus the first call; warm is ``--calls``
keep-alive calls on it, p50. Ratios are interface / ``sless`` of the same runtime. No
assertion: numbers are for people.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from pathlib import Path

import aiohttp
from isolation import HOST_IDS, LIMITS, _root
from table import Row

from sless.models import FunctionSpec
from sless.sandbox import SandboxSpec, default_runtimes_dir, start_worker

_ASGI = (
    "async def app(scope, receive, send):\n"
    "    if scope['type'] != 'http':\n        return\n"
    "    await receive()\n"
    "    await send({'type': 'http.response.start', 'status': 200,"
    " 'headers': [(b'content-type', b'application/json')]})\n"
    "    await send({'type': 'http.response.body', 'body': b'{\"ok\":true}'})\n"
)
#: (runtime, interface) → {file: source}
CODE: dict[tuple[str, str], dict[str, str]] = {
    ("python3.11", "sless"): {
        "handler.py": "def handle(event, context):\n    return {'ok': True}\n"
    },
    ("python3.11", "lambda"): {
        "lambda_function.py": "def lambda_handler(event, context):\n    return {'ok': True}\n"
    },
    ("python3.11", "openfaas"): {
        "handler.py": "def handle(event, context):\n"
        "    return {'statusCode': 200, 'body': {'ok': True}}\n"
    },
    ("python3.11", "knative"): {
        "function/__init__.py": "",
        "function/func.py": _ASGI
        + "\n\ndef new():\n    return F()\n\n\nclass F:\n    handle = staticmethod(app)\n",
    },
    ("python3.11", "asgi"): {"app.py": _ASGI},
    ("python3.11", "wsgi"): {
        "app.py": "def app(environ, start_response):\n"
        "    start_response('200 OK', [('Content-Type', 'application/json')])\n"
        "    return [b'{\"ok\":true}']\n"
    },
    ("nodejs20", "sless"): {"handler.js": "exports.handle = async () => ({ ok: true });\n"},
    ("nodejs20", "lambda"): {"index.js": "exports.handler = async () => ({ ok: true });\n"},
    ("nodejs20", "openfaas"): {
        "handler.js": "module.exports = async (event, context) => context.succeed({ ok: true });\n"
    },
    ("nodejs20", "knative"): {"index.js": "exports.handle = async () => ({ ok: true });\n"},
}


def _spec(root: Path, runtime: str, interface: str) -> SandboxSpec:
    function = FunctionSpec.model_validate({"runtime": runtime, "interface": interface})
    work = root / uuid.uuid4().hex[:8]
    for name, source in CODE[runtime, interface].items():
        (work / "code" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "code" / name).write_text(source)
    for path in [work, *work.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return SandboxSpec(
        name=f"bench.{work.name}",
        runtime=runtime,  # type: ignore[arg-type]
        code_dir=work / "code",
        deps_dir=None,
        entrypoint=function.entrypoint,
        env={},
        socket_dir=root / f"s{work.name}",
        log_file=work / "log",
        limits=LIMITS,
        function="bench",
        namespace="bench",
        interface_env=function.interface_env(),
        host_ids=HOST_IDS,
    )


async def _call(session: aiohttp.ClientSession) -> float:
    started = time.perf_counter()
    async with session.get("http://w/") as response:
        await response.read()
        response.raise_for_status()
    return (time.perf_counter() - started) * 1000


async def measure(
    root: Path, runtime: str, interface: str, runs: int, calls: int
) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"cold": [], "p50": []}
    for _ in range(runs):
        spec = _spec(root, runtime, interface)
        started = time.perf_counter()
        worker = await start_worker(spec, runtimes_dir=default_runtimes_dir())
        connector = aiohttp.UnixConnector(path=str(worker.socket_path))
        try:
            async with aiohttp.ClientSession(connector=connector) as session:
                await _call(session)
                figures["cold"].append((time.perf_counter() - started) * 1000)
                warm = [await _call(session) for _ in range(calls)]
            figures["p50"].append(statistics.median(warm))
        finally:
            await worker.stop()
    return figures


def rows(args: argparse.Namespace) -> list[Row]:
    root = _root()
    out: list[Row] = []
    for runtime in ("python3.11", "nodejs20"):
        base = asyncio.run(measure(root, runtime, "sless", args.runs, args.calls))
        for interface in [i for r, i in CODE if r == runtime and i != "sless"]:
            figures = asyncio.run(measure(root, runtime, interface, args.runs, args.calls))
            for key, label in (
                ("cold", "cold start (start + first call)"),
                ("p50", "warm call p50"),
            ):
                out.append(
                    Row(
                        measure=f"{runtime} {interface}: {label}",
                        figure=statistics.median(figures[key]),
                        unit="ms",
                        baseline=statistics.median(base[key]),
                        baseline_name="sless",
                        samples=tuple(figures[key]),
                    )
                )
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    if not any(a.dest == "calls" for a in parser._actions):
        parser.add_argument("--calls", type=int, default=200)


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    add_arguments(parser)
    print(render(rows(parser.parse_args())))

"""``sless dev``: the folder's function, served on this machine and reloaded on every save.

Each load does what ``sless deploy`` and the platform do to an upload, here: read and
check ``sless.yaml`` (``project``), pack the folder (``pack_directory``), run the upload
validation on it (``sless.validation``, as ``sless validate``), build it and start a
worker in the production sandbox (``devserving``). The folder is watched (its files'
sizes and times, twice a second) and a save loads it again; the new worker replaces the
old one only once it has started, so a save that fails (a ``sless.yaml`` error, a
rejection, a failed build, a worker that does not start) leaves the previous code
serving, and says why.

A verdict of ``review`` (production would hold the code for the provider) still serves
here, with the findings printed: it is the developer's own machine and code.

Calls to ``http://HOST:PORT/PATH`` reach the function as ``/fn/NAMESPACE/NAME/PATH``
does when deployed. Each prints a line (time, method, path, status, milliseconds,
invocation id) after the output the function wrote meanwhile, each output line with the
time it was read.

Secrets: the platform's store is not reachable from here: a spec's ``{"name": "dbpass",
"env": "DB_PASSWORD"}`` takes ``$DB_PASSWORD`` from the shell ``sless dev`` runs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from sless.cli import project as projects
from sless.cli.deploying import SKIP_DIRS, detect_runtime, pack_directory, print_report
from sless.cli.devserving import DevServing
from sless.config import Settings
from sless.models import FunctionSpec

_WATCH_S = 0.5
_LOG_POLL_S = 0.2

Snapshot = dict[str, tuple[int, int]]


def snapshot(directory: Path) -> Snapshot:
    """``relative path → (size, mtime_ns)`` of the files a deploy would pack."""
    found: Snapshot = {}
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for filename in files:
            path = Path(root) / filename
            try:
                info = path.stat()
            except OSError:
                continue
            found[str(path.relative_to(directory))] = (info.st_size, info.st_mtime_ns)
    return found


def _changed(before: Snapshot, now: Snapshot) -> list[str]:
    return sorted(p for p in before.keys() | now.keys() if before.get(p) != now.get(p))


def _stamp() -> str:
    return datetime.now().strftime("%H:%M:%S")


class _Output:
    """The worker's log, followed: new lines printed with the time they were read."""

    def __init__(self, serving: DevServing) -> None:
        self.serving = serving
        self.offset = 0
        self.partial = b""

    def drain(self) -> None:
        self.serving.logs.pump.flush(*self.serving.log_key)
        path = self.serving.log_file
        try:
            size = path.stat().st_size
        except OSError:
            return
        if size < self.offset:  # trimmed to its bound: read what is there now
            self.offset, self.partial = 0, b""
        if size == self.offset:
            return
        with path.open("rb") as f:
            f.seek(self.offset)
            data = f.read(size - self.offset)
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        stamp = _stamp()
        for line in lines:
            click.echo(f"{stamp} | {line.decode('utf-8', 'replace')}")

    async def follow(self) -> None:
        while True:
            self.drain()
            await asyncio.sleep(_LOG_POLL_S)


class DevLoop:
    def __init__(
        self, settings: Settings, directory: Path, *, flags: dict[str, Any], url: str
    ) -> None:
        self.settings = settings
        self.directory = directory
        self.flags = flags
        self.url = url
        project = projects.load(directory)
        self.name: str = (
            flags.get("name") or (project.name if project else None) or (directory.resolve().name)
        )
        self.serving = DevServing(settings, self.name)
        self.output = _Output(self.serving)

    def spec(self) -> FunctionSpec:
        """The spec of ``sless.yaml`` and the options, as the API would take it."""
        from pydantic import ValidationError

        project = projects.load(self.directory)
        fields = {k: v for k, v in self.flags.items() if k != "name" and v is not None}
        spec = projects.merge(project, fields)
        spec.setdefault("runtime", detect_runtime(self.directory))
        try:
            return FunctionSpec.model_validate(spec)
        except ValidationError as e:
            first = e.errors(include_input=False, include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            raise click.ClickException(f"{where}: {first['msg']}") from None

    async def load(self) -> None:
        """One load of the folder; on failure the reason is printed and the previous
        worker keeps serving."""
        try:
            await self._load()
        except click.ClickException as e:
            click.echo(f"{_stamp()} not reloaded: {e.message}", err=True)
        except Exception as e:  # a failed build, a worker that did not start...
            message = getattr(e, "message", None) or str(e)
            click.echo(f"{_stamp()} not reloaded: {message}", err=True)
        if self.serving.current is not None:
            return
        click.echo(f"{_stamp()} nothing serves yet: fix it and save", err=True)

    async def _load(self) -> None:
        spec = self.spec()
        archive = pack_directory(self.directory)
        sha256 = hashlib.sha256(archive).hexdigest()
        verdict = await self._validate(spec, archive, sha256)
        if verdict == "reject":
            raise click.ClickException("the upload validation rejects it (deploy would too)")
        secrets = {}
        for ref in spec.secrets:
            value = os.environ.get(ref.env)
            if value is None:
                click.echo(f"secret {ref.name}: ${ref.env} is not set here; runs without it")
            else:
                secrets[ref.env] = value
        await self.serving.replace(spec, archive, sha256, secrets)
        egress = ", ".join(spec.egress) if spec.egress else "none"
        isolation = "gVisor" if self.serving.launcher.isolation is not None else "bubblewrap"
        if self.settings.sandbox.unsafe_no_sandbox:
            isolation = "NO SANDBOX"
        click.echo(
            f"{_stamp()} {self.name} serves at {self.url} ({spec.runtime.value}, {isolation},"
            f" {spec.memory_mb} MiB, timeout {spec.timeout_s:g} s, egress: {egress})"
        )

    async def _validate(self, spec: FunctionSpec, archive: bytes, sha256: str) -> str:
        from sless.validation import Detonation, Validator

        one_shot = self.settings.validation.model_copy(update={"semgrep_resident": False})
        validator = Validator(one_shot, self.settings.llm)
        scratch = Path(tempfile.mkdtemp(prefix="sless-dev-validate-"))
        try:
            report = await validator.validate_archive(
                archive,
                scratch / "code",
                sha256=sha256,
                runtime=spec.runtime.value,
                entrypoint=spec.entrypoint,
                detonation=Detonation.from_spec(spec),
            )
        finally:
            await validator.close()
            shutil.rmtree(scratch, ignore_errors=True)
        data = report.model_dump(mode="json")
        if report.verdict.value == "allow" and not data.get("findings"):
            click.echo(f"{_stamp()} validation verdict: allow", err=True)
        else:
            print_report(data)
        if report.verdict.value == "review":
            click.echo("  (deployed, this code would wait for the provider's review)", err=True)
        return str(report.verdict.value)

    async def watch(self, before: Snapshot) -> None:
        """Load again whenever the folder differs from ``before`` (the loaded one)."""
        while True:
            await asyncio.sleep(_WATCH_S)
            now = snapshot(self.directory)
            changed = _changed(before, now)
            if changed:
                before = now
                shown = ", ".join(changed[:3]) + (" ..." if len(changed) > 3 else "")
                click.echo(f"{_stamp()} {shown} changed: reloading", err=True)
                await self.load()

    def called(
        self, method: str, target: str, status: int, started: float, invocation_id: uuid.UUID
    ) -> None:
        """The output the call wrote, then its line."""
        self.output.drain()
        ms = (time.monotonic() - started) * 1000
        click.echo(f"{_stamp()} {method} {target} -> {status} in {ms:.0f} ms ({invocation_id})")


def front(loop: DevLoop) -> Any:
    """The ASGI app on the local port: every request is one call of the function."""
    from sless.backends import call_function
    from sless.backends import headers as proxy_headers
    from sless.errors import SlessError

    limit = loop.settings.gateway.max_invoke_body_bytes

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        started = time.monotonic()
        invocation_id = uuid.uuid4()
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > limit:
                await _answer(send, 413, [], b'{"error": "the body is too large"}')
                return
        query = scope.get("query_string", b"").decode("latin-1")
        target = scope["path"] + ("?" + query if query else "")
        headers = proxy_headers.from_caller(
            [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        )
        try:
            spec = loop.serving.serving("", loop.name)
            response = await call_function(
                loop.serving,
                "",
                loop.name,
                method=scope["method"],
                path=target,
                headers=headers,
                body=body,
                invocation_id=invocation_id,
                timeout_s=spec.timeout_s,
            )
            status, out, payload = response.status, response.headers, response.body
        except SlessError as e:
            import json

            status, out = e.status, [(b"content-type", b"application/json")]
            error = {"code": e.code, "message": e.message}
            payload = json.dumps({"error": error}).encode()
        out = [*out, (b"x-sless-invocation-id", str(invocation_id).encode())]
        await _answer(send, status, out, payload)
        loop.called(scope["method"], target, status, started, invocation_id)

    return app


async def _answer(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def run_dev(
    settings: Settings, directory: Path, *, host: str, port: int, flags: dict[str, Any]
) -> None:
    """Serve the folder's function until Ctrl-C."""
    import uvicorn

    from sless.cli.server import graceful_server_class

    url = f"http://{host}:{port}/"
    loop = DevLoop(settings, directory, flags=flags, url=url)
    config = uvicorn.Config(
        front(loop), host=host, port=port, log_level="warning", lifespan="off", access_log=False
    )
    # Ctrl-C stops serving, then the worker and its files go (see graceful_server_class)
    server = graceful_server_class()(config)

    async def main() -> None:
        tasks: list[asyncio.Task[None]] = []
        try:
            # the first load before the port opens: no call meets a function still loading
            before = snapshot(directory)
            await loop.load()
            tasks.append(asyncio.create_task(loop.watch(before)))
            tasks.append(asyncio.create_task(loop.output.follow()))
            await server.serve()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await loop.serving.close()

    click.echo(f"Watching {directory.resolve()}: every save reloads {loop.name} (Ctrl-C stops)")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    click.echo("sless dev stopped")

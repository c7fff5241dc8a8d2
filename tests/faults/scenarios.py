"""The fault scenarios, shared by the tests (which assert on correctness) and by
``bench/faults.py`` (which prints their figures as the table in docs/RELIABILITY.md).

Each scenario runs a real ``sless up`` under a steady load and injects one fault in the
middle of it. The load is scaled to the test machine: ``RATE`` invocations per second
(the issue's 200/s is ``SLESS_FAULT_RATE=200``), uploads and asynchronous calls besides.
Each returns its ``Figures`` and the facts the tests check.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import httpx

from tests.faults.harness import (
    Figures,
    Load,
    Platform,
    Tenant,
    make_zip,
    missing_records,
    p99,
    platform_on,
    wait_until,
)

RATE = float(os.environ.get("SLESS_FAULT_RATE", "30"))
SECONDS = float(os.environ.get("SLESS_FAULT_SECONDS", "20"))
#: a short timeout (yet long enough for a machine loaded past its cores): the lease of an
#: asynchronous call taken by a killed process is the
#: timeout plus 30 s, after which another worker takes it again
SPEC: dict[str, Any] = {"timeout_s": 10}


@dataclass
class Result:
    figures: Figures
    facts: dict[str, Any] = field(default_factory=dict)


def _two_tenants(platform: Platform) -> tuple[Tenant, Tenant]:
    acme, globex = platform.tenant("acme"), platform.tenant("globex")
    acme.deploy("hello", spec=SPEC)
    globex.deploy("hello", spec=SPEC)
    acme.deploy("uploaded", spec=SPEC)
    return acme, globex


def _async_pending(platform: Platform, ids: set[str]) -> list[Any]:
    rows = platform.query(
        "SELECT id::text, state, attempts, next_attempt_at, locked_until, now() AS now"
        " FROM invocation_queue WHERE id = ANY($1::uuid[]) AND state <> 'succeeded'",
        list(ids),
    )
    found = platform.query(
        "SELECT count(*) AS n FROM invocation_queue WHERE id = ANY($1::uuid[])", list(ids)
    )[0]["n"]
    return [f"{found} of {len(ids)} in the queue", *[dict(r.items()) for r in rows[:5]]]


def _async_states(platform: Platform, ids: set[str]) -> dict[str, tuple[str, int]]:
    rows = platform.query(
        "SELECT id::text, state, attempts FROM invocation_queue WHERE id = ANY($1::uuid[])",
        list(ids),
    )
    return {r["id"]: (r["state"], r["attempts"]) for r in rows}


def _uploads_half_written(platform: Platform, tenant: Tenant, name: str) -> bool:
    """Whether the function's spec points at code that is not stored (a half-written
    upload)."""
    with tenant.client() as client:
        data = client.get(f"/v1/namespaces/{tenant.namespace}/functions/{name}").json()
    phase = data["status"]["phase"]
    return phase not in ("Ready", "Pending", "Validating", "Building", "Failed", "Rejected")


# -- the embedded PostgreSQL restarted or SIGKILLed ------------------------------------
def postgres_outage(tmp: Path, *, kill: bool) -> Result:
    with platform_on(tmp / "data") as platform:
        acme, globex = _two_tenants(platform)
        load = Load(
            platform.url,
            [(acme.namespace, "hello"), (globex.namespace, "hello")],
            rate=RATE,
            seconds=SECONDS,
            upload_to=(acme, "uploaded"),
        ).start()
        time.sleep(SECONDS / 3)
        fault_at = load.now()
        if kill:
            before = platform.postmaster_pid()
            platform.kill_postgres()
            # sless up's supervisor starts it again by itself (sless.store.embedded)
            wait_until(
                "sless up to start PostgreSQL again",
                lambda: platform.postmaster_pid() not in (None, before),
                120,
            )
        else:
            platform.restart_postgres()
        back_at = load.now()
        load.join()
        answered = load.answered_ids()
        lost = missing_records(platform, answered)
        accepted = load.answered_ids("async")
        states = wait_until(
            "the async calls to finish",
            lambda: (
                (s := _async_states(platform, accepted))
                and all(state == "succeeded" for state, _ in s.values())
                and len(s) == len(accepted)
                and s
            ),
            90,
            show=lambda: _async_pending(platform, accepted),
        )
        with platform.admin() as admin:
            healthy = admin.get("/readyz").status_code == 200
            metrics = admin.get("/metrics").text  # needs the admin (or metrics) token
        dropped = _metric(metrics, "sless_invocation_records_dropped_total")
        # the management API is back too
        with acme.client() as client:
            listed = client.get(f"/v1/namespaces/{acme.namespace}/functions").status_code
    failed = load.failed()
    name = (
        "PostgreSQL SIGKILL (started again by sless up)"
        if kill
        else "PostgreSQL restart (pg_ctl -m fast)"
    )
    return Result(
        Figures(
            name,
            len(load.outcomes),
            len(failed),
            len(lost),
            load.recovery_s(fault_at),
            f"failed by kind: {_kinds(failed)}; outage {back_at - fault_at:.1f} s;"
            f" dropped counter {dropped}",
        ),
        {
            "lost": lost,
            "answered": len(answered),
            "invoke_failed": len(load.failed("invoke")),
            "first_failures": [
                (round(o.t - fault_at, 2), o.kind, o.status, o.target)
                for o in (load.failed("invoke") + load.failed())[:8]
            ],
            "async_states": states,
            "healthy": healthy,
            "listed": listed,
            "dropped": dropped,
        },
    )


def _metric(text: str, name: str) -> int:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return int(float(line.split()[1]))
    raise AssertionError(f"{name} not in /metrics")


def _kinds(outcomes: list[Any]) -> str:
    counts: dict[str, int] = {}
    for o in outcomes:
        reason = o.status or ("not sent (256 in flight)" if o.target == "not sent" else "error")
        key = f"{o.kind} {reason}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "none"


# -- SIGKILL of sless up ------------------------------------------------------------------
CRON = "cron-ticks"


def platform_sigkill(tmp: Path) -> Result:
    platform = Platform(tmp / "data")
    try:
        platform.start()
        acme, globex = _two_tenants(platform)
        with acme.client() as client:
            response = client.put(
                f"/v1/namespaces/{acme.namespace}/triggers/{CRON}",
                json={"type": "cron", "function": "hello", "schedule": "* * * * * *"},
            )
            assert response.status_code in (200, 201), response.text
        load = Load(
            platform.url,
            [(acme.namespace, "hello"), (globex.namespace, "hello")],
            rate=RATE,
            seconds=SECONDS,
            upload_to=(acme, "uploaded"),
        ).start()
        time.sleep(SECONDS / 3)
        fault_at = load.now()
        platform.kill()
        platform.start()  # at once, on the same data directory
        back_at = load.now()
        load.join()
        answered = load.answered_ids()
        lost = missing_records(platform, answered)
        accepted = load.answered_ids("async")
        # every accepted call ends: it ran once, or (dispatched by the killed process) it
        # is interrupted; the restart takes the killed process's calls over at once
        states = wait_until(
            "every accepted async call to end",
            lambda: (
                (s := _async_states(platform, accepted))
                and len(s) == len(accepted)
                and all(state in ("succeeded", "interrupted") for state, _ in s.values())
                and s
            ),
            120,
            show=lambda: _async_pending(platform, accepted),
        )
        # the ticks due so far, the killed process's among them: each fired after the
        # restart or interrupted
        cutoff = datetime.now(UTC)
        wait_until(
            "the ticks claimed before the kill to end",
            lambda: (
                not platform.query(
                    "SELECT 1 FROM trigger_ticks WHERE namespace = $1 AND trigger = $2"
                    " AND state IN ('claimed', 'started') AND tick < $3",
                    acme.namespace,
                    CRON,
                    cutoff,
                )
            ),
            120,
        )
        ticks = platform.query(
            "SELECT tick, state, invocation_id::text AS id FROM trigger_ticks"
            " WHERE namespace = $1 AND trigger = $2 AND tick < $3 ORDER BY tick",
            acme.namespace,
            CRON,
            cutoff,
        )
        cron_records = platform.query(
            "SELECT id::text, error FROM invocations WHERE namespace = $1 AND trigger = $2",
            acme.namespace,
            CRON,
        )
        async_records = platform.query(
            "SELECT id::text, error FROM invocations WHERE id = ANY($1::uuid[])", list(accepted)
        )
        with acme.client() as client:
            client.delete(f"/v1/namespaces/{acme.namespace}/triggers/{CRON}")
    finally:
        platform.stop()
    tick_ids = [t["id"] for t in ticks if t["id"] is not None]
    recorded = {r["id"]: r["error"] for r in cron_records}
    failed = load.failed()
    interrupted = sum(1 for state, _ in states.values() if state == "interrupted")
    tick_states: dict[str, int] = {}
    for t in ticks:
        tick_states[t["state"]] = tick_states.get(t["state"], 0) + 1
    return Result(
        Figures(
            "SIGKILL of `sless up`, restarted at once",
            len(load.outcomes),
            len(failed),
            len(lost),
            load.recovery_s(fault_at),
            f"{len(answered)} answered calls; failed by kind: {_kinds(failed)};"
            f" restart took {back_at - fault_at:.1f} s; async: {len(accepted)} accepted,"
            f" {len(accepted) - interrupted} ran once, {interrupted} interrupted, none twice;"
            f" cron: {len(ticks)} ticks due, by state {tick_states}, none twice",
        ),
        {
            "lost": lost,
            "answered": len(answered),
            "async_states": states,
            "async_records": {r["id"]: r["error"] for r in async_records},
            "ticks": ticks,
            "tick_ids": tick_ids,
            "cron_records": recorded,
        },
    )


# -- the S3 store unreachable during an upload --------------------------------------------
def s3_unreachable(tmp: Path) -> Result:
    from moto.server import ThreadedMotoServer

    from tests.faults.harness import free_port

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    bucket = "code-" + uuid.uuid4().hex[:8]
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    s3.create_bucket(Bucket=bucket)
    env = {
        "SLESS_S3_BUCKET": bucket,
        "SLESS_S3_ENDPOINT_URL": endpoint,
        "SLESS_S3_ACCESS_KEY_ID": "test",
        "SLESS_S3_SECRET_ACCESS_KEY": "test",
    }
    moto_running = True
    try:
        with platform_on(tmp / "data", env) as platform:
            acme, globex = _two_tenants(platform)
            path = f"/v1/namespaces/{acme.namespace}/functions/hello"
            with acme.client() as client:
                before = client.get(path).json()
            load = Load(
                platform.url,
                [(acme.namespace, "hello"), (globex.namespace, "hello")],
                rate=RATE,
                seconds=SECONDS,
                async_rate=0,
            ).start()
            time.sleep(SECONDS / 4)
            fault_at = load.now()
            moto.stop()
            moto_running = False
            new_code = make_zip({"handler.py": "def handle(event, context):\n    return 'v2'\n"})
            with acme.client() as client:
                refused = client.post(
                    path + "/upload",
                    content=new_code,
                    headers={"Content-Type": "application/zip"},
                )
                during = client.get(path).json()
            time.sleep(2)
            moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            moto.start()
            moto_running = True
            back_at = load.now()
            with acme.client() as client:
                retried = client.post(
                    path + "/upload",
                    content=new_code,
                    headers={"Content-Type": "application/zip"},
                )
                after = wait_until(
                    "the retried upload to serve",
                    lambda: (
                        (d := client.get(path).json())["status"]["phase"] == "Ready"
                        and d["status"].get("observed_sha256") == retried.json().get("sha256")
                        and d
                    ),
                    120,
                )
            load.join()
            served_v2 = httpx.post(f"{platform.url}/fn/{acme.namespace}/hello").json()
    finally:
        if moto_running:
            moto.stop()
    failed = load.failed()
    return Result(
        Figures(
            "S3 store unreachable during an upload",
            len(load.outcomes) + 2,
            len(failed) + (refused.status_code != 202),
            None,
            back_at - fault_at,
            f"upload during the outage: {refused.status_code}"
            f" {refused.json().get('error', {}).get('code')}; invocations failed:"
            f" {len(load.failed('invoke'))}; retried upload: {retried.status_code}",
        ),
        {
            "refused": refused,
            "before": before,
            "during": during,
            "retried": retried,
            "after": after,
            "served_v2": served_v2,
            "invoke_failed": len(load.failed("invoke")),
        },
    )


# -- the data directory's disk full -------------------------------------------------------
@contextlib.contextmanager
def _tmpfs(path: Path, size_mb: int) -> Any:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)],
        check=True,
        timeout=30,
    )
    try:
        yield path
    finally:
        for _ in range(10):  # bounded: a process may still hold a file for a moment
            if subprocess.run(["umount", str(path)], timeout=30, check=False).returncode == 0:
                break
            time.sleep(1)


def _fill(path: Path) -> Path:
    filler = path / "filler"
    with filler.open("wb") as f:
        chunk = b"\0" * (1 << 20)
        with contextlib.suppress(OSError):
            for _ in range(100_000):  # bounded by the tmpfs size long before this
                f.write(chunk)
                f.flush()
    # the last partial megabyte too
    with contextlib.suppress(OSError), filler.open("ab") as f:
        for _ in range(1 << 10):
            f.write(b"\0" * 1024)
            f.flush()
    return filler


def disk_full(tmp: Path) -> Result:
    with _tmpfs(tmp / "mnt", 400) as mnt, platform_on(mnt / "data") as platform:
        acme, globex = _two_tenants(platform)
        path = f"/v1/namespaces/{acme.namespace}/functions/uploaded"
        with acme.client() as client:
            before = client.get(path).json()
        load = Load(
            platform.url,
            [(acme.namespace, "hello"), (globex.namespace, "hello")],
            rate=RATE,
            seconds=SECONDS,
            async_rate=0,
        ).start()
        time.sleep(SECONDS / 4)
        fault_at = load.now()
        filler = _fill(mnt)
        code = make_zip({"handler.py": "def handle(event, context):\n    return 'v2'\n"})
        with acme.client() as client:
            refused = client.post(
                path + "/upload", content=code, headers={"Content-Type": "application/zip"}
            )
            during = client.get(path).json()
        time.sleep(SECONDS / 4)
        filler.unlink()
        freed_at = load.now()
        with acme.client() as client:
            retried = wait_until(
                "an upload to be accepted again",
                lambda: (
                    (
                        r := client.post(
                            path + "/upload",
                            content=code,
                            headers={"Content-Type": "application/zip"},
                        )
                    ).status_code
                    == 202
                    and r
                ),
                60,
                every=1,
            )
            after = wait_until(
                "the new upload to serve",
                lambda: (
                    (d := client.get(path).json())["status"]["phase"] == "Ready"
                    and d["status"].get("observed_sha256") == retried.json()["sha256"]
                    and d
                ),
                120,
            )
        load.join()
        answered = load.answered_ids()
        lost = missing_records(platform, answered)
        served = httpx.post(f"{platform.url}/fn/{acme.namespace}/uploaded").json()
        integrity = platform.query("SELECT count(*) AS n FROM invocations")[0]["n"]
    failed = load.failed()
    return Result(
        Figures(
            "data directory's disk full (tmpfs)",
            len(load.outcomes) + 1,
            len(failed) + (refused.status_code != 202),
            len(lost),
            freed_at - fault_at,
            f"upload while full: {refused.status_code}"
            f" {refused.json().get('error', {}).get('code')}; invocations failed:"
            f" {len(load.failed('invoke'))}; recovery = time full",
        ),
        {
            "refused": refused,
            "before": before,
            "during": during,
            "after": after,
            "served": served,
            "lost": lost,
            "invoke_failed": len(load.failed("invoke")),
            "rows": integrity,
        },
    )


# -- a storm of OOM kills and crashes in one tenant's workers -----------------------------
STORMY = (
    "import os\n"
    "def handle(event, context):\n"
    "    mode = (event.get('query') or {}).get('mode', 'ok')\n"
    "    if mode == 'oom':\n"
    "        block = bytearray(400 * 1024 * 1024)\n"
    "        for i in range(0, len(block), 4096):\n"
    "            block[i] = 1\n"
    "    if mode == 'crash':\n"
    "        os._exit(3)\n"
    "    return {'ok': True}\n"
)


def crash_storm(tmp: Path) -> Result:
    with platform_on(tmp / "data") as platform:
        victim, other = platform.tenant("stormy"), platform.tenant("calm")
        victim.deploy("stormy", STORMY, {"memory_mb": 64, "timeout_s": 10, "concurrency": 4})
        other.deploy("hello", spec=SPEC)
        calm_target = [(other.namespace, "hello")]
        for _ in range(20):  # warm: the unloaded figure must not hold a cold start
            httpx.post(f"{platform.url}/fn/{other.namespace}/hello", timeout=30)
        quiet = Load(platform.url, calm_target, rate=RATE / 2, seconds=SECONDS / 2, async_rate=0)
        quiet.start().join()
        storm_calls: list[int | None] = []
        stop = threading.Event()

        def storm() -> None:
            deadline = time.monotonic() + SECONDS
            n = 0
            with httpx.Client(base_url=platform.url, timeout=30) as client:
                while not stop.is_set() and time.monotonic() < deadline and n < 10_000:
                    mode = "oom" if n % 2 else "crash"
                    try:
                        status: int | None = client.post(
                            f"/fn/{victim.namespace}/stormy", params={"mode": mode}
                        ).status_code
                    except httpx.HTTPError:
                        status = None
                    storm_calls.append(status)
                    n += 1

        stormers = [threading.Thread(target=storm, daemon=True) for _ in range(4)]
        for thread in stormers:
            thread.start()
        loaded = Load(platform.url, calm_target, rate=RATE / 2, seconds=SECONDS, async_rate=0)
        loaded.start().join()
        stop.set()
        for thread in stormers:
            thread.join(timeout=60)
        recovered = wait_until(
            "the crashing function to serve again",
            lambda: (
                httpx.post(f"{platform.url}/fn/{victim.namespace}/stormy", timeout=30).status_code
                == 200
            ),
            60,
        )
    quiet_p99 = p99([o.latency_s for o in quiet.of("invoke") if o.ok])
    loaded_p99 = p99([o.latency_s for o in loaded.of("invoke") if o.ok])
    statuses = {s: storm_calls.count(s) for s in set(storm_calls)}
    return Result(
        Figures(
            "OOM kills and crashes storm in one tenant",
            len(loaded.outcomes) + len(storm_calls),
            len(loaded.failed()),
            None,
            None,
            f"other tenant's p99 {quiet_p99 * 1000:.1f} ms unloaded,"
            f" {loaded_p99 * 1000:.1f} ms in the storm ({loaded_p99 / quiet_p99:.2f}x);"
            f" {len(storm_calls)} storm calls, statuses {statuses}; failed column: the"
            " other tenant's calls",
        ),
        {
            "other_failed": len(loaded.failed()) + len(quiet.failed()),
            "other_calls": len(loaded.outcomes),
            "storm_statuses": statuses,
            "recovered": recovered,
            "ratio": loaded_p99 / quiet_p99,
        },
    )


def cleanup(tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)

"""The HTTP API as programs use it: cursor paging, If-Match, Idempotency-Key, RateLimit.

Real gateway under uvicorn, real PostgreSQL; invocation records are written by the
platform's own batched writer (``InvocationRecorder``), as the invoke path writes them.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from sless.config import Settings
from sless.store import InvocationRecord, InvocationRecorder, create_pool
from tests.conftest import RunningGateway

pytestmark = pytest.mark.integration

NS = "sless-acme"
V1 = f"/v1/namespaces/{NS}"
SPEC = {"runtime": "python3.11"}


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


@pytest.fixture
def rival(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("rival")


class Writer:
    """The platform's invocation writer on a loop of its own, for the test's thread."""

    def __init__(self, database_url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.pool: asyncpg.Pool = self._run(create_pool(database_url, min_size=1, max_size=2))
        self.recorder = InvocationRecorder(self.pool)

    def _run(self, coroutine):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def write(self, records: list[InvocationRecord]) -> None:
        async def go() -> None:
            for record in records:
                self.recorder.record(record)
            await self.recorder.flush()

        self._run(go())

    def close(self) -> None:
        self._run(self.pool.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


@pytest.fixture
def writer(gateway: RunningGateway, database_url: str) -> Iterator[Writer]:
    w = Writer(database_url)
    yield w
    w.close()


def _record(at: datetime, *, namespace: str = NS, function: str = "fn", status: int = 200):  # type: ignore[no-untyped-def]
    return InvocationRecord(
        id=uuid.uuid4(),
        tenant=namespace.removeprefix("sless-"),
        namespace=namespace,
        function=function,
        status=status,
        duration_ms=1.0,
        request_bytes=0,
        response_bytes=0,
        started_at=at,
    )


def _error(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    assert error["code"]
    assert error["message"]
    return error


# -- paging ------------------------------------------------------------------------------------


def test_walking_5000_invocations_while_more_arrive_sees_each_once(
    acme: httpx.Client, writer: Writer
) -> None:
    start = datetime.now(UTC) - timedelta(hours=1)
    # 50 distinct timestamps for 5,000 rows: the id must break the ties
    existing = [_record(start + timedelta(seconds=i % 50)) for i in range(5000)]
    writer.write(existing)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, str | int] = {"limit": 337}
        if cursor:
            params["cursor"] = cursor
        response = acme.get(f"{V1}/invocations", params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["count"] == len(body["invocations"]) <= 337
        assert "total" not in body
        seen += [row["id"] for row in body["invocations"]]
        pages += 1
        # more arrive while the walk goes on: newer ones, and late ones between pages
        writer.write(
            [_record(datetime.now(UTC)) for _ in range(40)]
            + [_record(start + timedelta(seconds=pages % 50, microseconds=7)) for _ in range(5)]
        )
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)), "a row came twice"
    assert {str(r.id) for r in existing} <= set(seen), "a row that existed was missed"
    assert pages >= 5000 // 337


def test_invocation_filters(acme: httpx.Client, writer: Writer) -> None:
    now = datetime.now(UTC)
    writer.write(
        [
            _record(now - timedelta(minutes=10), function="a", status=200),
            _record(now - timedelta(minutes=5), function="a", status=404),
            _record(now - timedelta(minutes=1), function="b", status=503),
            _record(now - timedelta(minutes=1), namespace="sless-rival", function="a"),
        ]
    )

    def ids(**params: str) -> list[tuple[str, int]]:
        response = acme.get(f"{V1}/invocations", params=params)
        assert response.status_code == 200, response.text
        return [(r["function"], r["status"]) for r in response.json()["invocations"]]

    assert ids() == [("b", 503), ("a", 404), ("a", 200)]
    assert ids(function="a") == [("a", 404), ("a", 200)]
    assert ids(status="4xx") == [("a", 404)]
    assert ids(status="5xx") == [("b", 503)]
    since = (now - timedelta(minutes=6)).isoformat()
    until = (now - timedelta(minutes=2)).isoformat()
    assert ids(since=since, until=until) == [("a", 404)]
    assert ids(state="queued") == []
    _error(acme.get(f"{V1}/invocations", params={"status": "6xx"}), 422)


def test_every_list_pages_with_a_cursor(gateway: RunningGateway, acme: httpx.Client) -> None:
    for i in range(5):
        assert acme.put(f"{V1}/functions/f{i}", json=SPEC).status_code == 201
        assert acme.put(f"{V1}/secrets/s{i}", json={"value": "v"}).status_code == 201
        trigger = {"type": "cron", "function": f"f{i}", "schedule": "0 0 1 1 *"}
        assert acme.put(f"{V1}/triggers/t{i}", json=trigger).status_code == 201
    for kind, prefix in [("functions", "f"), ("secrets", "s"), ("triggers", "t")]:
        names: list[str] = []
        cursor = None
        while True:
            params: dict[str, str | int] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            body = acme.get(f"{V1}/{kind}", params=params).json()
            assert body["total"] == 5
            names += [item["name"] for item in body[kind]]
            cursor = body["next_cursor"]
            if cursor is None:
                break
        assert names == [f"{prefix}{i}" for i in range(5)], kind
    for name in ["t-a", "t-b", "t-c"]:
        gateway.tenant(name)
    first = gateway.admin.get("/v1/admin/tenants", params={"limit": 2}).json()
    assert first["count"] == 2
    assert first["next_cursor"]
    rest = gateway.admin.get(
        "/v1/admin/tenants", params={"limit": 1000, "cursor": first["next_cursor"]}
    ).json()
    listed = [t["tenant"] for t in first["tenants"] + rest["tenants"]]
    assert listed == sorted(listed)
    assert len(listed) == first["total"] == 4
    audit = acme.get(f"{V1}/audit", params={"limit": 3}).json()
    assert audit["count"] == 3
    assert audit["next_cursor"]
    older = acme.get(f"{V1}/audit", params={"limit": 3, "cursor": audit["next_cursor"]}).json()
    assert older["entries"][0]["id"] < audit["entries"][-1]["id"]


def test_bad_cursors_and_limits_get_a_clear_4xx(
    acme: httpx.Client, rival: httpx.Client, writer: Writer
) -> None:
    writer.write([_record(datetime.now(UTC)) for _ in range(3)])
    writer.write([_record(datetime.now(UTC), namespace="sless-rival") for _ in range(3)])
    theirs = rival.get("/v1/namespaces/sless-rival/invocations", params={"limit": 1}).json()
    foreign = theirs["next_cursor"]
    assert foreign
    mine = acme.get(f"{V1}/invocations", params={"limit": 1}).json()["next_cursor"]
    body, _, mac = mine.partition(".")
    tampered = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + mac
    for cursor in ["garbage", "", "a.b", tampered, foreign, "x" * 3000]:
        response = acme.get(f"{V1}/invocations", params={"cursor": cursor, "limit": 1})
        if cursor == "":  # an empty cursor is the first page
            assert response.status_code == 200
            continue
        error = _error(response, 400 if len(cursor) < 2048 else 422)
        assert "rival" not in response.text
        assert "invocations" not in response.json()
        assert error["code"] in {"bad_request", "invalid"}
    # a cursor of one list (or other filters) is not a cursor of another
    _error(acme.get(f"{V1}/functions", params={"cursor": mine}), 400)
    _error(acme.get(f"{V1}/invocations", params={"cursor": mine, "function": "x"}), 400)
    for limit in ["0", "100000", "-1", "ten"]:
        _error(acme.get(f"{V1}/invocations", params={"limit": limit}), 422)


# -- If-Match ----------------------------------------------------------------------------------


def test_racing_puts_with_if_match_give_one_200_and_one_412(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    created = acme.put(f"{V1}/functions/race", json=SPEC)
    assert created.status_code == 201
    tag = created.headers["ETag"]
    assert tag == f'"{created.json()["resource_version"]}"'
    assert acme.get(f"{V1}/functions/race").headers["ETag"] == tag
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    other = gateway.client(token)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def put(client: httpx.Client, memory: int) -> None:
        barrier.wait()
        response = client.put(
            f"{V1}/functions/race",
            json={**SPEC, "memory_mb": memory},
            headers={"If-Match": tag},
        )
        statuses.append(response.status_code)

    threads = [threading.Thread(target=put, args=(c, m)) for c, m in [(acme, 256), (other, 512)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 412]
    stale = acme.put(f"{V1}/functions/race", json=SPEC, headers={"If-Match": tag})
    assert _error(stale, 412)["code"] == "precondition_failed"
    _error(acme.delete(f"{V1}/functions/race", headers={"If-Match": tag}), 412)
    current = acme.get(f"{V1}/functions/race").headers["ETag"]
    assert acme.delete(f"{V1}/functions/race", headers={"If-Match": current}).status_code == 200


def test_if_match_on_triggers_jobs_and_secrets(acme: httpx.Client) -> None:
    assert acme.put(f"{V1}/functions/fn", json=SPEC).status_code == 201
    objects = {
        "secrets/s": {"value": "one"},
        "triggers/t": {"type": "cron", "function": "fn", "schedule": "0 0 1 1 *"},
        "jobs/j": {"function": "fn", "run_id": 0},
    }
    for path, body in objects.items():
        # If-Match: * on a missing object, and any tag on it, is a 412
        _error(acme.put(f"{V1}/{path}", json=body, headers={"If-Match": "*"}), 412)
        first = acme.put(f"{V1}/{path}", json=body)
        assert first.status_code == 201, first.text
        tag = first.headers["ETag"]
        again = acme.put(f"{V1}/{path}", json=body, headers={"If-Match": tag})
        assert again.status_code == 200, (path, again.text)
        assert again.headers["ETag"] != tag
        _error(acme.put(f"{V1}/{path}", json=body, headers={"If-Match": tag}), 412)
        weak = "W/" + again.headers["ETag"]
        _error(acme.put(f"{V1}/{path}", json=body, headers={"If-Match": weak}), 412)
        assert acme.put(f"{V1}/{path}", json=body, headers={"If-Match": "*"}).status_code == 200


@pytest.mark.parametrize(
    "value", ["42", '"unterminated', "W/42", '"a" "b"', '"' + "x" * 2000 + '"']
)
def test_malformed_if_match_is_a_400(acme: httpx.Client, value: str) -> None:
    assert acme.put(f"{V1}/functions/fn", json=SPEC).status_code == 201
    _error(acme.put(f"{V1}/functions/fn", json=SPEC, headers={"If-Match": value}), 400)


# -- Idempotency-Key ---------------------------------------------------------------------------


def test_onboarding_with_the_same_key_onboards_once(gateway: RunningGateway) -> None:
    key = {"Idempotency-Key": "onboard-" + uuid.uuid4().hex}
    first = gateway.admin.post("/v1/admin/tenants", json={"name": "once"}, headers=key)
    assert first.status_code == 201, first.text
    again = gateway.admin.post("/v1/admin/tenants", json={"name": "once"}, headers=key)
    assert again.status_code == 201, again.text
    assert again.json() == first.json()  # the same token: the first answer was lost
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    tenants = gateway.admin.get("/v1/admin/tenants").json()["tenants"]
    assert [t["tenant"] for t in tenants] == ["once"]
    tokens = gateway.admin.get("/v1/admin/tenants/once/tokens").json()
    assert tokens["count"] == 1
    other = gateway.admin.post("/v1/admin/tenants", json={"name": "twice"}, headers=key)
    assert _error(other, 422)["code"] == "invalid"
    # without a key: as before, a second onboarding of the same name is a conflict
    assert gateway.admin.post("/v1/admin/tenants", json={"name": "once"}).status_code == 409


def test_job_run_with_the_same_key_starts_once(acme: httpx.Client) -> None:
    assert acme.put(f"{V1}/functions/fn", json=SPEC).status_code == 201
    key = {"Idempotency-Key": "run-1"}
    job = {"function": "fn", "run_id": 1, "payload": {"n": 1}}
    first = acme.put(f"{V1}/jobs/j", json=job, headers=key)
    assert first.status_code == 201, first.text
    # the job moves on (the run fails: the function has no code); a retry changes nothing
    again = acme.put(f"{V1}/jobs/j", json=job, headers=key)
    assert again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    _error(acme.put(f"{V1}/jobs/j", json={**job, "run_id": 2}, headers=key), 422)


def test_idempotency_keys_are_per_tenant_and_bounded_in_size(
    acme: httpx.Client, rival: httpx.Client
) -> None:
    for client, ns in [(acme, NS), (rival, "sless-rival")]:
        assert client.put(f"/v1/namespaces/{ns}/functions/fn", json=SPEC).status_code == 201
    key = {"Idempotency-Key": "shared-key"}
    job = {"function": "fn", "run_id": 1}
    assert acme.put(f"{V1}/jobs/j", json=job, headers=key).status_code == 201
    # the same key in another tenant is another key: no replay of acme's answer
    theirs = rival.put("/v1/namespaces/sless-rival/jobs/j", json=job, headers=key)
    assert theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers
    assert theirs.json()["namespace"] == "sless-rival"
    for bad in ["k" * 256, "with space", "é".encode()]:
        response = acme.put(f"{V1}/jobs/j", json=job, headers={"Idempotency-Key": bad})
        _error(response, 400)


# -- RateLimit headers -------------------------------------------------------------------------


@pytest.fixture
def tight_limits(settings: Settings) -> None:
    settings.limits.api_burst = 3
    settings.limits.api_rate_per_s = 0.01


def test_rate_limited_callers_get_ratelimit_headers(
    tight_limits: None, gateway: RunningGateway
) -> None:
    client = gateway.tenant("limited")
    first = client.get("/v1/whoami")
    assert first.headers["RateLimit-Policy"].startswith('"api";q=')
    assert first.headers["RateLimit"].startswith('"api";r=')
    responses = [client.get("/v1/namespaces/sless-limited/functions") for _ in range(5)]
    limited = [r for r in responses if r.status_code == 429]
    assert limited, [r.status_code for r in responses]
    assert limited[0].headers["Retry-After"]
    assert (
        limited[0].headers["RateLimit"]
        == '"api";r=0;t=' + limited[0].headers["RateLimit"].rsplit("=", 1)[1]
    )
    assert "RateLimit" not in gateway.admin.get("/v1/admin/tenants").headers


# -- the CLI follows the cursor ----------------------------------------------------------------


def test_cli_invocations_all_walks_every_page(
    gateway: RunningGateway, acme: httpx.Client, writer: Writer
) -> None:
    import json
    import subprocess
    import sys

    now = datetime.now(UTC)
    records = [
        _record(now - timedelta(seconds=i), status=200 if i % 5 else 502) for i in range(250)
    ]
    writer.write(records)
    token = acme.headers["Authorization"].removeprefix("Bearer ")
    common = ["--url", gateway.url, "--token", token, "--json", "--limit", "100"]

    def sless(*args: str) -> dict[str, Any]:
        result = subprocess.run(
            [sys.executable, "-m", "sless.cli", "invocations", *args, *common],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    ids = [row["id"] for row in sless("--all")["invocations"]]
    assert sorted(ids) == sorted(str(r.id) for r in records)
    assert sless("--all", "--status", "5xx")["count"] == 50
    since = (now - timedelta(seconds=9.5)).isoformat()
    assert sless("--since", since)["count"] == 10
    assert sless()["count"] == 100  # without --all: one page


def test_a_tenant_created_again_does_not_replay_its_predecessors_answers(
    gateway: RunningGateway,
) -> None:
    key = {"Idempotency-Key": "same-key"}
    job = {"function": "fn", "run_id": 1}
    first = gateway.tenant("again")
    assert first.put("/v1/namespaces/sless-again/functions/fn", json=SPEC).status_code == 201
    assert first.put("/v1/namespaces/sless-again/jobs/j", json=job, headers=key).status_code == 201
    assert gateway.admin.delete("/v1/admin/tenants/again").status_code == 200
    second = gateway.tenant("again")
    assert second.put("/v1/namespaces/sless-again/functions/fn", json=SPEC).status_code == 201
    response = second.put("/v1/namespaces/sless-again/jobs/j", json=job, headers=key)
    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response.headers


def test_a_retried_async_call_with_the_same_key_runs_once(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    from tests.support import make_zip, wait_for, wait_phase

    path = f"{V1}/functions/counter"
    assert acme.put(path, json=SPEC).status_code == 201
    code = make_zip({"handler.py": "def handle(event, context):\n    return {'ok': True}\n"})
    key = {"Idempotency-Key": "upload-1", "Content-Type": "application/zip"}
    uploaded = acme.post(f"{path}/upload", content=code, headers=key)
    assert uploaded.status_code == 202, uploaded.text
    again = acme.post(f"{path}/upload", content=code, headers=key)
    assert again.status_code == 202
    assert again.json() == uploaded.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    wait_phase(acme, path, {"Ready", "Failed", "Rejected"})

    url = f"{gateway.url}/fn/{NS}/counter"
    headers = {"Prefer": "respond-async", "Idempotency-Key": "call-1"}
    first = httpx.post(url, json={"n": 1}, headers=headers)
    assert first.status_code == 202, first.text
    invocation_id = first.json()["invocation_id"]
    retried = httpx.post(url, json={"n": 1}, headers=headers)
    assert retried.status_code == 202
    assert retried.json() == {"invocation_id": invocation_id}
    assert retried.headers["x-sless-invocation-id"] == invocation_id
    assert retried.headers["idempotent-replayed"] == "true"
    other = httpx.post(url, json={"n": 2}, headers=headers)
    assert _error(other, 422)["code"] == "invalid"

    def finished() -> bool:
        state = acme.get(f"{V1}/invocations/{invocation_id}").json().get("state")
        return state in {"succeeded", "failed", "dead"}

    wait_for("the async call to finish", finished, timeout=60)
    assert acme.get(f"{V1}/invocations/{invocation_id}").json()["state"] == "succeeded"
    # one queued call, one run: the retry queued nothing (the refused 422 is no run). The
    # record is written by the batched invocation writer, a moment after the queue row ends
    params = {"function": "counter", "status": "2xx"}

    def recorded() -> list[str]:
        rows = acme.get(f"{V1}/invocations", params=params).json()["invocations"]
        return [row["id"] for row in rows]

    wait_for("the invocation record", recorded, timeout=30)
    time.sleep(1)  # a second run, if there were one, would be recorded by now as well
    assert recorded() == [invocation_id]

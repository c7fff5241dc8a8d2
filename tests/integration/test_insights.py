"""The API the console reads beyond the resources: invocation and verdict statistics, and
a held upload's flagged files. Real gateway, real PostgreSQL; the model is the local fake
LLM server (the only fake allowed)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import make_zip, with_llm

pytestmark = pytest.mark.integration

STATS = "/v1/namespaces/sless-acme/stats/invocations"


@pytest.fixture
def settings(settings: Settings, llm: FakeLLM) -> Settings:
    return with_llm(settings, llm)


def _insert(database_url: str, rows: list[tuple[str, str, int, float, datetime]]) -> None:
    async def insert() -> None:
        conn = await asyncpg.connect(database_url)
        try:
            await conn.executemany(
                "INSERT INTO invocations (id, tenant, namespace, function, status, duration_ms,"
                " request_bytes, response_bytes, started_at)"
                " VALUES ($1, 'x', $2, $3, $4, $5, 0, 0, $6)",
                [(uuid.uuid4(), ns, fn, status, ms, at) for ns, fn, status, ms, at in rows],
            )
        finally:
            await conn.close()

    asyncio.run(insert())


def test_invocation_stats_per_bucket(gateway: RunningGateway, database_url: str) -> None:
    acme = gateway.tenant("acme")
    gateway.tenant("other")
    # one minute, aligned to the grid, well inside the last hour
    minute = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
    rows = [
        ("sless-acme", "hello", 200, float(ms), minute + timedelta(seconds=1))
        for ms in range(1, 101)
    ]
    rows.append(("sless-acme", "hello", 502, 1000.0, minute + timedelta(seconds=2)))
    rows.append(("sless-acme", "other-fn", 200, 5.0, minute + timedelta(seconds=3)))
    rows.append(("sless-other", "hello", 200, 7.0, minute + timedelta(seconds=4)))
    rows.append(("sless-acme", "hello", 200, 9.0, minute - timedelta(hours=2)))  # too old
    _insert(database_url, rows)

    response = acme.get(STATS, params={"function": "hello"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["step_s"] == 60
    [bucket] = body["buckets"]
    assert datetime.fromisoformat(bucket["at"]) == minute
    assert bucket["count"] == 101
    assert bucket["errors"] == 1
    assert bucket["p50_ms"] == 51.0  # the median of 1..100 and 1000
    assert 99 < bucket["p99_ms"] < 1000

    # the whole namespace, never another tenant's rows
    [everything] = acme.get(STATS).json()["buckets"]
    assert everything["count"] == 102

    admin = gateway.admin.get("/v1/admin/stats").json()
    assert sum(b["count"] for b in admin["invocations"]) == 103
    assert "validations" in admin


def test_stats_refuse_bad_windows_and_other_namespaces(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    assert acme.get(STATS, params={"window_s": 7 * 24 * 3600, "step_s": 10}).status_code == 422
    assert acme.get(STATS, params={"step_s": 1}).status_code == 422
    assert acme.get(STATS, params={"function": "Not_A_Name"}).status_code == 422
    assert acme.get("/v1/namespaces/sless-other/stats/invocations").status_code == 404
    assert acme.get("/v1/admin/stats").status_code == 401
    assert httpx.get(f"{gateway.url}{STATS}").status_code == 401


def test_verdicts_are_counted(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("suspicious"))
    acme = gateway.tenant("acme")
    acme.put("/v1/namespaces/sless-acme/functions/held", json={})
    code = make_zip({"handler.py": "def handle(event, context):\n    return 1\n"})
    assert (
        acme.post("/v1/namespaces/sless-acme/functions/held/upload", content=code).status_code
        == 202
    )
    validations = gateway.admin.get("/v1/admin/stats").json()["validations"]
    assert sum(b["review"] for b in validations) == 1
    assert sum(b["allow"] + b["reject"] for b in validations) == 0


def test_a_reviewer_reads_the_flagged_files(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("suspicious", [{"file": "lib/miner.py", "line": 2, "reason": "mines"}]))
    acme = gateway.tenant("acme")
    acme.put("/v1/namespaces/sless-acme/functions/held", json={})
    files = {
        "handler.py": "from lib import miner\ndef handle(event, context):\n    return 1\n",
        "lib/__init__.py": "",
        "lib/miner.py": "import os\nos.cpu_count()  # <script>alert(1)</script>\n",
    }
    response = acme.post("/v1/namespaces/sless-acme/functions/held/upload", content=make_zip(files))
    assert response.status_code == 202, response.text
    review_id = response.json()["review_id"]

    body = gateway.admin.get(f"/v1/admin/reviews/{review_id}/files").json()
    assert body["count"] == 3
    by_path = {f["path"]: f for f in body["files"]}
    assert set(by_path) == set(files)
    flagged = by_path["lib/miner.py"]
    assert flagged["flagged"] is True
    assert flagged["lines"] == [2]
    assert flagged["text"] == files["lib/miner.py"]  # as text: escaping is the console's job
    assert "text" not in by_path["handler.py"]  # only what a finding names is read

    assert acme.get(f"/v1/admin/reviews/{review_id}/files").status_code == 401

    # the tenant reads the same flagged lines of its own held code
    own = acme.get("/v1/namespaces/sless-acme/functions/held/validation/files").json()
    assert own["sha256"] == body["sha256"]
    assert [f["path"] for f in own["files"] if f.get("flagged")] == ["lib/miner.py"]
    other = gateway.tenant("other")
    assert other.get("/v1/namespaces/sless-acme/functions/held/validation/files").status_code == 404

    # a rejected upload is never stored: its findings have no files to show
    llm.always(verdict("malicious", [{"file": "handler.py", "line": 1, "reason": "bad"}]))
    acme.put("/v1/namespaces/sless-acme/functions/evil", json={})
    evil_code = make_zip({"handler.py": "def handle(event, context):\n    return 'evil'\n"})
    evil = acme.post("/v1/namespaces/sless-acme/functions/evil/upload", content=evil_code)
    assert evil.status_code == 422
    missing = acme.get("/v1/namespaces/sless-acme/functions/evil/validation/files")
    assert missing.status_code == 404
    assert "rejected upload" in missing.json()["error"]["message"]
    assert gateway.admin.get("/v1/admin/reviews/999999/files").status_code == 404

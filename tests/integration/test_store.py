"""Blob stores (local and S3 over HTTP) and the invocation writer, on real services."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sless.config import S3Settings
from sless.store import (
    InvocationRecord,
    InvocationRecorder,
    LocalBlobStore,
    S3BlobStore,
    create_pool,
    list_invocations,
    migrate,
)
from tests.support import new_bucket, s3_client

pytestmark = pytest.mark.integration


def _roundtrip(store: LocalBlobStore | S3BlobStore) -> None:
    data = b"PK\x03\x04 pretend zip"
    sha = hashlib.sha256(data).hexdigest()

    async def scenario() -> None:
        assert not await store.exists(sha)
        await store.put(sha, data)
        await store.put(sha, data)  # idempotent
        assert await store.exists(sha)
        assert await store.get(sha) == data
        await store.delete(sha)
        assert not await store.exists(sha)

    asyncio.run(scenario())


def test_local_blob_store(tmp_path: Path) -> None:
    _roundtrip(LocalBlobStore(tmp_path / "blobs"))


def test_s3_blob_store_over_http(s3_endpoint: str) -> None:
    bucket = new_bucket(s3_endpoint)
    client = s3_client(s3_endpoint)
    settings = S3Settings(
        bucket=bucket,
        endpoint_url=s3_endpoint,
        access_key_id="test",  # type: ignore[arg-type]
        secret_access_key="test",  # type: ignore[arg-type]
    )
    store = S3BlobStore(settings)
    _roundtrip(store)
    # the object lands under the configured prefix, keyed by digest
    asyncio.run(store.put("a" * 64, b"x"))
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == ["code/" + "a" * 64 + ".zip"]


def _record(function: str) -> InvocationRecord:
    return InvocationRecord(
        id=uuid.uuid4(),
        tenant="acme",
        namespace="sless-acme",
        function=function,
        status=200,
        duration_ms=1.5,
        request_bytes=3,
        response_bytes=4,
        started_at=datetime.now(UTC),
    )


def test_recorder_flushes_everything_on_close(database_url: str) -> None:
    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            recorder = InvocationRecorder(pool, flush_interval_s=5.0, batch_size=100)
            recorder.start()
            for i in range(250):
                recorder.record(_record(f"f{i % 3}"))
            await recorder.close()
            assert recorder.written == 250
            assert recorder.dropped == 0
            count = await pool.fetchval("SELECT count(*) FROM invocations")
            assert count == 250
            rows = await list_invocations(pool, "sless-acme", function="f1", limit=1000)
            assert len(rows) == sum(1 for i in range(250) if i % 3 == 1)
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_recorder_writes_a_full_batch_without_waiting_out_its_interval(database_url: str) -> None:
    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            recorder = InvocationRecorder(pool, flush_interval_s=3600.0, batch_size=100)
            recorder.start()
            for _ in range(50):
                recorder.record(_record("f"))
            await asyncio.sleep(0.1)  # the writer is gathering now, for up to an hour
            assert recorder.written == 0
            for _ in range(50):
                recorder.record(_record("f"))
            # the batch is full: written at once (the bound is only against a hang)
            async with asyncio.timeout(30):
                while recorder.written < 100:
                    await asyncio.sleep(0.01)
            assert await pool.fetchval("SELECT count(*) FROM invocations") == 100
            await recorder.close()
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_recorder_counts_what_it_drops_when_full(database_url: str) -> None:
    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            recorder = InvocationRecorder(pool, max_queue=10)
            for _ in range(15):  # not started: nothing drains the queue
                recorder.record(_record("f"))
            assert recorder.dropped == 5
            await recorder.close()
            assert recorder.written == 10
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_migrations_are_applied_once(database_url: str) -> None:
    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            first, second = await asyncio.gather(migrate(pool), migrate(pool))
            files = Path(__file__).parents[2] / "sless/store/migrations"
            versions = sorted(int(p.name[:4]) for p in files.glob("[0-9][0-9][0-9][0-9]_*.sql"))
            assert len(versions) >= 3
            # applied exactly once between the two concurrent runs, all of them
            assert sorted(first + second) == versions
            assert await migrate(pool) == []
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_function_left_pending_by_a_refused_first_upload_reads_rejected(
    database_url: str,
) -> None:
    """Migration 0024: rows stored before a refused upload set the phase (a function with
    no code, its last report a reject) read Rejected with the reason; the others stay."""
    reject = {
        "verdict": "reject",
        "findings": [
            {"rule": "a", "message": "reads a file", "severity": "review"},
            {"rule": "b", "message": "sends the environment out", "severity": "reject"},
        ],
    }
    code = {"sha256": "0" * 64, "size": 1}
    rows = {
        "stale": ({"runtime": "python3.11"}, "Pending", reject),
        "no-upload-yet": ({"runtime": "python3.11"}, "Pending", None),
        "building": ({"runtime": "python3.11", "code": code}, "Pending", reject),
        "explicit-null": ({"runtime": "python3.11", "code": None}, "Pending", reject),
    }

    async def run() -> dict[str, tuple[str, str]]:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            for name, (spec, phase, validation) in rows.items():
                await pool.execute(
                    "INSERT INTO functions (namespace, name, spec, phase, validation)"
                    " VALUES ('sless-acme', $1, $2, $3, $4)",
                    name,
                    spec,
                    phase,
                    validation,
                )
            # as on a database the release before this one left
            await pool.execute("DELETE FROM schema_migrations WHERE version = 24")
            assert 24 in await migrate(pool)
            found = await pool.fetch("SELECT name, phase, message FROM functions")
            return {r["name"]: (r["phase"], r["message"]) for r in found}
        finally:
            await pool.close()

    after = asyncio.run(run())
    rejected = ("Rejected", "upload rejected: sends the environment out")
    assert after["stale"] == rejected
    assert after["explicit-null"] == rejected
    assert after["no-upload-yet"] == ("Pending", "")
    assert after["building"] == ("Pending", "")

"""The invocation writer's journal and retries, on a real PostgreSQL.

A crash is simulated the honest way the recorder can see it: records are appended and
the process "dies" (the recorder is dropped with its queue unwritten, only its files
closed); a new recorder on the same directory must write them exactly once.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from sless.store import InvocationRecord, InvocationRecorder, create_pool, migrate
from sless.store.journal import Journal, JournalBusy

pytestmark = pytest.mark.integration


def _record(i: int) -> InvocationRecord:
    session = i % 7 == 0  # a WebSocket session: its messages each way
    return InvocationRecord(
        id=uuid.uuid4(),
        tenant="acme",
        namespace="sless-acme",
        function=f"f{i % 3}",
        status=101 if session else 200,
        duration_ms=1.5,
        request_bytes=3,
        response_bytes=4,
        started_at=datetime.now(UTC),
        error=None if i % 2 else "boom",
        trigger="cron:nightly" if i % 5 == 0 else None,
        request_messages=i if session else None,
        response_messages=i + 1 if session else None,
    )


def test_records_of_a_crashed_process_are_replayed_once(database_url: str, tmp_path: Path) -> None:
    journal_dir = tmp_path / "journal"

    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            crashed = InvocationRecorder(pool, journal_dir=journal_dir)
            await crashed.replay()
            sent = [_record(i) for i in range(700)]
            for record in sent:
                crashed.record(record)  # never written: the writer never ran
            assert crashed.journal is not None
            crashed.journal.close()  # the kernel closes the files of a killed process
            # a copy of what was left, to replay a second time below
            shutil.copytree(journal_dir, tmp_path / "copy")

            after = InvocationRecorder(pool, journal_dir=journal_dir)
            assert await after.replay() == 700
            after.start()
            await after.close()
            rows = await pool.fetch("SELECT * FROM invocations")
            assert {r["id"] for r in rows} == {r.id for r in sent}
            got = {r["id"]: dict(r.items()) for r in rows}
            for record in sent:
                row = got[record.id]
                assert row["error"] == record.error
                assert row["trigger"] == record.trigger
                assert row["started_at"] == record.started_at
                assert row["request_messages"] == record.request_messages
                assert row["response_messages"] == record.response_messages
            assert list(journal_dir.glob("*.jsonl")) == [], "replayed segments stay"

            # the same journal replayed again (a crash during replay): no duplicates
            again = InvocationRecorder(pool, journal_dir=tmp_path / "copy")
            assert await again.replay() == 0
            assert await pool.fetchval("SELECT count(*) FROM invocations") == 700
            assert again.journal is not None
            again.journal.close()
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_line_cut_by_a_crash_is_skipped(database_url: str, tmp_path: Path) -> None:
    journal_dir = tmp_path / "journal"

    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            crashed = InvocationRecorder(pool, journal_dir=journal_dir)
            await crashed.replay()
            for i in range(10):
                crashed.record(_record(i))
            assert crashed.journal is not None
            crashed.journal.close()
            (segment,) = journal_dir.glob("*.jsonl")
            with segment.open("ab") as f:
                f.write(b'{"id": "cut sh')
            after = InvocationRecorder(pool, journal_dir=journal_dir)
            assert await after.replay() == 10
            after.start()
            await after.close()
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_a_dead_sibling_process_journal_is_replayed_and_a_live_ones_is_not(
    database_url: str, tmp_path: Path
) -> None:
    """One journal per gateway process: the one that starts replays the journals of the
    dead ones (``gateway-2``), never one a live process still writes (``gateway-3``), nor
    another kind's (``events``)."""
    root = tmp_path / "journal"

    async def scenario() -> None:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            live = InvocationRecorder(pool, journal_dir=root / "gateway-3")
            await live.replay()
            live.record(_record(99))  # in its journal and its queue: its own to write
            dead = InvocationRecorder(pool, journal_dir=root / "gateway-2")
            await dead.replay()
            lost = [_record(i) for i in range(50)]
            for record in lost:
                dead.record(record)
            assert dead.journal is not None
            dead.journal.close()  # killed: its files closed, its lock gone
            other = InvocationRecorder(pool, journal_dir=root / "events")
            await other.replay()
            other.record(_record(98))
            assert other.journal is not None
            other.journal.close()

            starting = InvocationRecorder(pool, journal_dir=root / "gateway")
            assert await starting.replay() == 50
            rows = await pool.fetch("SELECT id FROM invocations")
            assert {r["id"] for r in rows} == {r.id for r in lost}
            assert list((root / "gateway-2").glob("*.jsonl")) == []
            assert len(list((root / "gateway-3").glob("*.jsonl"))) == 1
            assert len(list((root / "events").glob("*.jsonl"))) == 1
            # the dead process's directory can be taken again by its successor
            successor = Journal(root / "gateway-2")
            assert successor.open() == []
            successor.close()
            starting.start()
            await starting.close()
            live.start()
            await live.close()
            assert await pool.fetchval("SELECT count(*) FROM invocations") == 51
        finally:
            await pool.close()

    asyncio.run(scenario())


def test_one_journal_directory_has_one_owner(tmp_path: Path) -> None:
    first = Journal(tmp_path / "j")
    first.open()
    try:
        with pytest.raises(JournalBusy):
            Journal(tmp_path / "j").open()
    finally:
        first.close()


def test_records_wait_out_a_database_outage(database_url: str, tmp_path: Path) -> None:
    """Connections refused and cut for a while: nothing recorded meanwhile is lost."""
    name = database_url.split("?")[0].rsplit("/", 1)[1]
    admin_url = database_url.replace(f"/{name}?", "/postgres?")

    async def scenario() -> None:
        pool = await create_pool(database_url, max_size=2)
        admin = await asyncpg.connect(admin_url)
        try:
            await migrate(pool)
            recorder = InvocationRecorder(
                pool, journal_dir=tmp_path / "journal", flush_interval_s=0.05, retry_max_s=0.2
            )
            await recorder.replay()
            recorder.start()
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                name,
            )
            for i in range(500):
                recorder.record(_record(i))
                if i % 100 == 0:
                    await asyncio.sleep(0.1)
            for _ in range(100):  # bounded: until the writer has failed at least once
                if recorder.failed_batches:
                    break
                await asyncio.sleep(0.05)
            assert recorder.failed_batches > 0, "the outage never reached the writer"
            assert recorder.written == 0
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            await recorder.close()
            assert recorder.dropped == 0
            assert recorder.written == 500
            assert await pool.fetchval("SELECT count(*) FROM invocations") == 500
        finally:
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            await admin.close()
            await pool.close()

    asyncio.run(scenario())


def test_closing_with_the_database_down_leaves_the_records_journaled(
    database_url: str, tmp_path: Path
) -> None:
    name = database_url.split("?")[0].rsplit("/", 1)[1]
    admin_url = database_url.replace(f"/{name}?", "/postgres?")
    journal_dir = tmp_path / "journal"

    async def scenario() -> None:
        pool = await create_pool(database_url, max_size=2)
        admin = await asyncpg.connect(admin_url)
        try:
            await migrate(pool)
            recorder = InvocationRecorder(pool, journal_dir=journal_dir)
            await recorder.replay()
            recorder.start()
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                name,
            )
            for i in range(50):
                recorder.record(_record(i))
            await recorder.close()
            assert recorder.written == 0
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            after = InvocationRecorder(pool, journal_dir=journal_dir)
            assert await after.replay() == 50
            after.start()
            await after.close()
            assert await pool.fetchval("SELECT count(*) FROM invocations") == 50
        finally:
            await admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")
            await admin.close()
            await pool.close()

    asyncio.run(scenario())

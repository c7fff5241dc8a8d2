"""Invocation records into PostgreSQL: the platform's writer against a raw asyncpg COPY.

A real embedded PostgreSQL (``sless.store.embedded``, as ``sless up`` starts it) with the
platform's schema. Each run writes ``--history-rows`` records (100,000 by default) twice,
into an emptied ``invocations`` table:

- **baseline**: the same rows, already as tuples, in one ``copy_records_to_table`` per
  10,000 rows on one connection: the fastest way asyncpg puts them there;
- **writer**: what the gateway does: ``InvocationRecorder.record`` for every record (queue
  and journal line, in a journal directory as ``sless up`` has one), 1,000 records per
  event-loop step, while its background task writes batches; the clock stops when the
  last record is in the table. The producer waits while more than half of the queue's
  bound is waiting, so no record is dropped: the figure is what the writer sustains.

A second row runs the writer without its journal (``journal_dir=None``, what a gateway
does when another process holds the directory), to show what the journal's one
``write(2)`` per record costs. Figures are thousands of records per second; the ratio is
writer / raw COPY (target >= 0.7, and >= 50k records/s).

    uv run python bench/history.py [--runs 3] [--history-rows 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
from table import Row, note, row

from sless.models import namespace_for
from sless.store import InvocationRecord, InvocationRecorder, create_pool, migrate
from sless.store.embedded import EmbeddedPostgres

#: every column the writer fills, so the baseline copies the same rows
_COLUMNS = list(InvocationRecord._fields)
_STEP = 1000


def _records(count: int) -> list[InvocationRecord]:
    start = datetime(2026, 12, 3, tzinfo=UTC)
    out = []
    for i in range(count):
        namespace = namespace_for(f"tenant{i % 10}")
        out.append(
            InvocationRecord.of_call(
                uuid.uuid4(),
                namespace,
                f"fn{i % 50}",
                status=200 if i % 20 else 500,
                duration_ms=1.5 + (i % 100) / 10,
                request_bytes=120 + i % 7,
                response_bytes=40 + i % 13,
                started_at=start + timedelta(microseconds=i * 50),
                error=None if i % 20 else "handler raised ValueError",
                trigger="http" if i % 3 else None,
            )
        )
    return out


async def _raw_copy(pool: asyncpg.Pool, records: list[InvocationRecord]) -> float:
    rows = [tuple(getattr(r, c) for c in _COLUMNS) for r in records]
    async with pool.acquire() as conn:
        started = time.perf_counter()
        for i in range(0, len(rows), 10_000):
            await conn.copy_records_to_table(
                "invocations", records=rows[i : i + 10_000], columns=_COLUMNS
            )
        return len(rows) / (time.perf_counter() - started)


async def _writer(
    pool: asyncpg.Pool, records: list[InvocationRecord], journal: Path | None
) -> float:
    recorder = InvocationRecorder(pool, journal_dir=journal)
    await recorder.replay()
    recorder.start()
    bound = 50_000
    started = time.perf_counter()
    for i in range(0, len(records), _STEP):
        while recorder.buffered > bound:  # noqa: ASYNC110 - polls the writer's counter
            await asyncio.sleep(0.001)
        for record in records[i : i + _STEP]:
            recorder.record(record)
        await asyncio.sleep(0)
    while recorder.written < len(records):
        if recorder.dropped:
            raise SystemExit(f"the writer dropped {recorder.dropped} records")
        await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - started
    await recorder.close()
    return len(records) / elapsed


async def _count(pool: asyncpg.Pool) -> int:
    return int(await pool.fetchval("SELECT count(*) FROM invocations"))


async def _measure(
    data: Path, count: int, runs: int
) -> tuple[list[float], list[float], list[float]]:
    server = EmbeddedPostgres(data / "pg")
    dsn = await asyncio.to_thread(server.start)
    try:
        pool = await create_pool(dsn)
        try:
            await migrate(pool)
            raw: list[float] = []
            writer: list[float] = []
            memory_only: list[float] = []
            kinds = ("raw", "writer", "memory")
            for run in range(runs):
                # in turns, so a burst of load on the machine hits each of them
                for kind in kinds[run % 3 :] + kinds[: run % 3]:
                    records = _records(count)
                    await pool.execute("TRUNCATE invocations")
                    await pool.execute("CHECKPOINT")
                    if kind == "raw":
                        raw.append(await _raw_copy(pool, records))
                    elif kind == "memory":
                        memory_only.append(await _writer(pool, records, None))
                    else:
                        journal = data / f"journal-{run}"
                        writer.append(await _writer(pool, records, journal))
                        if list(journal.glob("*.jsonl")):
                            raise SystemExit("the writer left journal segments behind")
                    if await _count(pool) != count:
                        raise SystemExit(f"{kind}: {await _count(pool)} rows, not {count}")
                note(
                    f"  run {run + 1}: raw COPY {raw[-1]:.0f}/s, writer {writer[-1]:.0f}/s,"
                    f" writer without journal {memory_only[-1]:.0f}/s"
                )
            return writer, memory_only, raw
        finally:
            await pool.close()
    finally:
        await asyncio.to_thread(server.stop)


def rows(args: argparse.Namespace) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="sless-bench-history-") as tmp:
        writer, memory_only, raw = asyncio.run(_measure(Path(tmp), args.history_rows, args.runs))
    return [
        row(
            "invocation records into PostgreSQL, sustained",
            [w / 1000 for w in writer],
            "k/s",
            baseline=[r / 1000 for r in raw],
            baseline_name="raw asyncpg COPY",
            target=">= 50 k/s, ratio >= 0.7",
        ),
        row(
            "invocation records, writer without its journal",
            [m / 1000 for m in memory_only],
            "k/s",
            baseline=[r / 1000 for r in raw],
            baseline_name="raw asyncpg COPY",
        ),
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--history-rows", type=int, default=100_000, help="records per history run")


if __name__ == "__main__":
    from table import render

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of every figure")
    add_arguments(parser)
    print(render(rows(parser.parse_args())))

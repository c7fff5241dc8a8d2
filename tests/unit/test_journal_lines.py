"""Journal lines of invocation records: what is written reads back as the same record."""

from __future__ import annotations

import json
import math
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from sless.store import InvocationRecord
from sless.store.journal import Journal


def _record(**changes: object) -> InvocationRecord:
    values: dict[str, object] = {
        "id": uuid.uuid4(),
        "tenant": "acme",
        "namespace": "sless-acme",
        "function": "hello",
        "status": 200,
        "duration_ms": 1.25,
        "request_bytes": 10,
        "response_bytes": 20,
        "started_at": datetime(2026, 12, 3, 13, 0, 0, 123456, tzinfo=UTC),
        "error": None,
        "trigger": None,
    }
    values.update(changes)
    return InvocationRecord(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "record",
    [
        _record(),
        _record(
            error='quote " backslash \\ newline \n tab \t nul \x00 é \u2028 😀', trigger="cron"
        ),
        _record(started_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5)))),
        _record(status=503, duration_ms=0.0, request_bytes=0, response_bytes=2**40),
        _record(duration_ms=float("inf")),
        _record(version="v12", trigger="queue"),
        _record(
            status=502, error="bad_gateway", reason="worker killed: out of memory (128 MiB limit)"
        ),
        _record(status=101, request_messages=3, response_messages=2**40),
        _record(status=101, error="idle", request_messages=0, response_messages=0),
    ],
)
def test_a_journal_line_reads_back_as_the_record(record: InvocationRecord) -> None:
    line = record.journal_line()
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1, "one line, whatever the error says"
    assert InvocationRecord.from_journal(json.loads(line)) == record


def test_a_nan_duration_stays_nan() -> None:
    back = InvocationRecord.from_journal(json.loads(_record(duration_ms=math.nan).journal_line()))
    assert math.isnan(back.duration_ms)


def test_segments_of_earlier_versions_are_read(tmp_path: Path) -> None:
    """Earlier versions journaled an object keyed by column; replay still reads those."""
    record = _record(error="boom", trigger="http")
    old = {
        "id": str(record.id),
        "tenant": record.tenant,
        "namespace": record.namespace,
        "function": record.function,
        "status": record.status,
        "duration_ms": record.duration_ms,
        "request_bytes": record.request_bytes,
        "response_bytes": record.response_bytes,
        "started_at": record.started_at.isoformat(),
        "error": record.error,
        "trigger": record.trigger,
    }
    segment = tmp_path / "000000000001.jsonl"
    segment.write_bytes(json.dumps(old).encode() + b"\n" + record.journal_line() + b'["cut')
    read = [InvocationRecord.from_journal(values) for values in Journal.read(segment)]
    assert read == [record, record], "the cut last line is skipped, both forms read"


def test_a_line_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="journal line"):
        InvocationRecord.from_journal(["only", "three", "values"])


def test_lines_written_before_reasons_are_read() -> None:
    """A line of the version before ``reason`` (three values fewer: no reason, no
    messages) reads back without them."""
    record = _record(error="timeout", trigger="http", version="v2")
    line = json.loads(record.journal_line())[:-3]
    assert InvocationRecord.from_journal(line) == record
    with pytest.raises(ValueError, match="values"):
        InvocationRecord.from_journal(line[:-1])


def test_lines_written_before_session_messages_are_read() -> None:
    """A line of the version before the messages of a session (two values fewer) reads
    back without them; a line cut in between is refused."""
    record = _record(status=502, error="timeout", reason="timed out after 30 s")
    line = json.loads(record.journal_line())
    assert InvocationRecord.from_journal(line[:-2]) == record
    with pytest.raises(ValueError, match="values"):
        InvocationRecord.from_journal(line[:-1])

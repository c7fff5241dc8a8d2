"""The journal line of an invocation record reads back as the same record."""

from __future__ import annotations

import json
import uuid
from dataclasses import fields
from datetime import UTC, datetime

from sless.store import InvocationRecord
from sless.store.journal import encode


def test_journal_values_name_every_field_and_read_back_equal() -> None:
    record = InvocationRecord(
        id=uuid.uuid4(),
        tenant="acme",
        namespace="sless-acme",
        function="hello",
        status=502,
        duration_ms=1.25,
        request_bytes=3,
        response_bytes=4,
        started_at=datetime.now(UTC),
        error="upstream_error",
        trigger="cron:nightly",
    )
    values = record.journal_values()
    assert set(values) == {f.name for f in fields(InvocationRecord)}
    line = encode(values)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert InvocationRecord.from_journal(json.loads(line)) == record

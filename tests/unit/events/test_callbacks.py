"""The pure parts of callbacks: the document sent and its signature."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from datetime import UTC, datetime
from typing import Any

from sless.events.callbacks import CallbackOutcome, callback_document, sign

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _row(**changes: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": uuid.UUID(int=1),
        "namespace": "sless-acme",
        "function": "echo",
        "state": "succeeded",
        "status": 200,
        "error": None,
        "attempts": 1,
        "max_attempts": 5,
        "result": b'{"ok": true}',
        "content_type": "application/json",
        "result_truncated": False,
        "created_at": NOW,
        "started_at": NOW,
        "finished_at": NOW,
    }
    row.update(changes)
    return row


def test_document_carries_the_outcome_and_a_text_result() -> None:
    document = callback_document(_row())
    assert document == {
        "invocation_id": str(uuid.UUID(int=1)),
        "namespace": "sless-acme",
        "function": "echo",
        "state": "succeeded",
        "status": 200,
        "error": None,
        "attempts": 1,
        "max_attempts": 5,
        "result": {
            "encoding": "text",
            "data": '{"ok": true}',
            "content_type": "application/json",
            "truncated": False,
        },
        "created_at": NOW.isoformat(),
        "started_at": NOW.isoformat(),
        "finished_at": NOW.isoformat(),
    }
    json.dumps(document)  # serialisable as is


def test_binary_result_is_base64_and_missing_result_is_null() -> None:
    binary = callback_document(_row(result=b"\xff\x00\xfe", content_type=None))["result"]
    assert binary == {
        "encoding": "base64",
        "data": "/wD+",
        "content_type": None,
        "truncated": False,
    }
    dead = callback_document(_row(state="dead", status=504, error="timed out", result=None))
    assert dead["result"] is None
    assert dead["state"] == "dead"
    assert dead["error"] == "timed out"


def test_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    body = b'{"a": 1}'
    signature = sign(b"k3y", "1700000000", body)
    expected = hmac.new(b"k3y", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signature == f"sha256={expected}"
    # another timestamp, body or key gives another signature (replays cannot be re-dated)
    assert sign(b"k3y", "1700000001", body) != signature
    assert sign(b"k3y", "1700000000", body + b" ") != signature
    assert sign(b"other", "1700000000", body) != signature


def test_outcome_as_json() -> None:
    outcome = CallbackOutcome(state="failed", host="h:80", attempts=3, status=503, message="m")
    assert outcome.as_json() == {
        "state": "failed",
        "host": "h:80",
        "attempts": 3,
        "status": 503,
        "message": "m",
        "at": "",
    }

"""What the platform stands on failing maps to an answer a caller can act on."""

from __future__ import annotations

import errno
from pathlib import Path

import asyncpg
import pytest

from sless.gateway.errors import ERROR_RESPONSES, infrastructure_error
from sless.store import create_pool


def test_a_database_that_went_away_is_503_database_unavailable() -> None:
    for exc in [
        asyncpg.exceptions.ConnectionDoesNotExistError("gone"),
        asyncpg.exceptions.CannotConnectNowError("starting"),
        ConnectionRefusedError(),
        TimeoutError(),
    ]:
        mapped = infrastructure_error(exc)
        assert mapped is not None, exc
        assert (mapped.status, mapped.code) == (503, "database_unavailable")


async def test_a_missing_database_socket_is_503_database_unavailable(tmp_path: Path) -> None:
    # the embedded PostgreSQL between its stop and its start: no Unix socket at all
    # (asyncpg raises a bare FileNotFoundError; it answered 500 in the restart scenario)
    with pytest.raises(ConnectionRefusedError) as refused:
        await create_pool(f"postgresql://postgres:@/postgres?host={tmp_path}")
    mapped = infrastructure_error(refused.value)
    assert mapped is not None
    assert (mapped.status, mapped.code) == (503, "database_unavailable")


def test_a_full_disk_is_507_insufficient_storage() -> None:
    for exc in [asyncpg.exceptions.DiskFullError("full"), OSError(errno.ENOSPC, "full")]:
        mapped = infrastructure_error(exc)
        assert mapped is not None, exc
        assert (mapped.status, mapped.code) == (507, "insufficient_storage")


def test_anything_else_stays_an_internal_error() -> None:
    assert infrastructure_error(ValueError("bug")) is None
    assert infrastructure_error(OSError(errno.EACCES, "denied")) is None


def test_every_error_answer_is_declared_as_json() -> None:
    for status in (400, 401, 403, 404, 409, 413, 422, 429, 503, 507):
        content = ERROR_RESPONSES[status]["content"]
        assert list(content) == ["application/json"]
        assert content["application/json"]["schema"]["required"] == ["error"]

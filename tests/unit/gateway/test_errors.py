"""What the platform stands on failing maps to an answer a caller can act on."""

from __future__ import annotations

import errno

import asyncpg

from sless.gateway.errors import ERROR_RESPONSES, infrastructure_error


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

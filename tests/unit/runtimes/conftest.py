"""Fixtures for the runtime servers (see ``harness``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit.runtimes.harness import Server, start_server, stop_server


@pytest.fixture(scope="module", params=["python3.11", "nodejs20"])
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module", params=["handle", "ahandle"], ids=["sync", "async"])
def server(
    runtime: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One server per runtime and handler flavour (sync / async), shared by a module."""
    workdir = tmp_path_factory.mktemp(f"{runtime}-{request.param}")
    srv = start_server(runtime, workdir, entrypoint=f"handler.{request.param}")
    yield srv
    stop_server(srv)

"""A shared sandboxed probe worker for the integration tests of this directory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sless.sandbox import Worker
from tests.integration.sandbox.harness import launch, make_spec, require_sandbox


@pytest.fixture(scope="module")
async def probe_worker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Worker]:
    require_sandbox()
    worker = await launch(make_spec(tmp_path_factory.mktemp("probe")))
    yield worker
    await worker.stop()

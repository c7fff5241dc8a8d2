"""Attack: filling the disk through /tmp. /tmp is a tmpfs of tmp_size_mb."""

from __future__ import annotations

from pathlib import Path

import pytest

from sless.sandbox import Limits
from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_tmp_is_size_limited(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path, limits=Limits(memory_mb=128, tmp_size_mb=4)))
    try:
        data = await run_probe(
            worker,
            """
            import errno
            written, failure = 0, None
            chunk = b"x" * (1024 * 1024)
            try:
                for i in range(64):
                    with open(f"/tmp/fill-{i}", "wb") as f:
                        f.write(chunk)
                    written += 1
            except OSError as e:
                failure = errno.errorcode[e.errno]
            result = {"written_mb": written, "errno": failure}
            """,
        )
    finally:
        await worker.stop()
    assert data["result"]["errno"] == "ENOSPC"
    assert data["result"]["written_mb"] <= 4

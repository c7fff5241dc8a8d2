"""Attack: a function rewrites its own code, the runtime server or the interpreter, or
writes anywhere outside its /tmp."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_code_and_system_are_read_only(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    try:
        data = await run_probe(
            worker,
            """
            import os, sys
            outcomes = {}
            for path in ["/code/handler.py", "/code/new.py", "/runtime/server.py",
                         sys.executable, "/usr/evil", "/evil", "/etc/passwd"]:
                try:
                    with open(path, "a") as f:
                        f.write("# pwned")
                    outcomes[path] = "written"
                except OSError as e:
                    outcomes[path] = type(e).__name__
            with open("/tmp/ok.txt", "w") as f:
                f.write("scratch space works")
            outcomes["/tmp"] = "written"
            result = outcomes
            """,
        )
    finally:
        await worker.stop()
    outcomes = data["result"]
    assert outcomes.pop("/tmp") == "written"
    # EROFS, or EACCES first where the tenant's host uid does not own the file
    assert set(outcomes.values()) <= {"OSError", "PermissionError"}, outcomes
    assert "pwned" not in (worker.spec.code_dir / "handler.py").read_text()
    assert not (worker.spec.code_dir / "new.py").exists()

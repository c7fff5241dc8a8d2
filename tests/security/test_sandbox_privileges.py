"""Attack: a function gains privileges: root uid, capabilities, setuid, new user
namespaces (the usual first step of kernel exploits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_uid_65534_without_capabilities(tmp_path: Path) -> None:
    require_sandbox()
    worker = await launch(make_spec(tmp_path))
    try:
        data = await run_probe(
            worker,
            """
            import ctypes, os
            status = dict(
                line.split(":", 1) for line in open("/proc/self/status").read().splitlines()
            )
            caps = {k: int(v.strip(), 16) for k, v in status.items() if k.startswith("Cap")}
            try:
                os.setuid(0)
                setuid = "succeeded"
            except OSError as e:
                setuid = type(e).__name__
            libc = ctypes.CDLL(None, use_errno=True)
            CLONE_NEWUSER = 0x10000000
            userns = libc.unshare(CLONE_NEWUSER)
            result = {
                "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
                "groups": os.getgroups(), "caps": caps, "setuid": setuid,
                "no_new_privs": status["NoNewPrivs"].strip(),
                "unshare_user": [userns, ctypes.get_errno()],
            }
            """,
        )
    finally:
        await worker.stop()
    found = data["result"]
    assert (found["uid"], found["euid"], found["gid"]) == (65534, 65534, 65534)
    assert found["caps"]["CapEff"] == 0
    assert found["caps"]["CapPrm"] == 0
    assert found["caps"]["CapBnd"] == 0
    assert found["caps"]["CapAmb"] == 0
    # EINVAL: uid 0 does not even exist in the sandbox's user namespace
    assert found["setuid"] in ("OSError", "PermissionError")
    assert found["no_new_privs"] == "1"
    assert found["unshare_user"][0] == -1  # --disable-userns

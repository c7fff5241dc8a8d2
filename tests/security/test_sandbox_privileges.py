"""Attack: a function gains privileges: root uid, capabilities, setuid, new user
namespaces (the usual first step of kernel exploits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_uid_65534_without_capabilities(tmp_path: Path, isolation: str) -> None:
    require_sandbox()
    spec = make_spec(tmp_path)
    worker = await launch(spec)
    try:
        data = await run_probe(
            worker,
            """
            import ctypes, os
            status = dict(
                line.split(":", 1) for line in open("/proc/self/status").read().splitlines()
            )
            caps = {k: int(v.strip(), 16) for k, v in status.items() if k.startswith("Cap")}
            try:  # become anyone else: root, or (already 0 under gVisor) uid 1
                os.setuid(1 if os.getuid() == 0 else 0)
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
            # the only writable bind: what the host sees of the sandbox's identity
            open("/run/sless/written-by-tenant", "w").close()
            """,
        )
        written = (spec.socket_dir / "written-by-tenant").stat()
    finally:
        await worker.stop()
    found = data["result"]
    # on the host, whatever the sandbox calls itself, it is the tenant's unprivileged uid
    assert spec.host_ids is not None
    assert (written.st_uid, written.st_gid) == (spec.host_ids.uid, spec.host_ids.gid)
    # gVisor: 0 of the Sentry's own kernel, mapped to the tenant's host uid by rootless
    # runsc (sless/sandbox/gvisor.py, GVISOR_UID); bubblewrap: 65534 of its user namespace
    inside = 0 if isolation == "gvisor" else 65534
    assert (found["uid"], found["euid"], found["gid"]) == (inside, inside, inside)
    assert found["caps"]["CapEff"] == 0
    assert found["caps"]["CapPrm"] == 0
    assert found["caps"]["CapBnd"] == 0
    assert found["caps"]["CapAmb"] == 0
    # EINVAL: uid 0 does not even exist in the sandbox's user namespace
    assert found["setuid"] in ("OSError", "PermissionError")
    assert found["no_new_privs"] == "1"
    assert found["unshare_user"][0] == -1  # --disable-userns

"""Attack: reading host files (/etc/shadow, /root, /home, the gateway's data directory,
the host's /etc/passwd, other processes through /proc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration


async def test_host_files_are_invisible(tmp_path: Path, isolation: str) -> None:
    require_sandbox()
    data_dir = tmp_path / "gateway-data"
    data_dir.mkdir()
    secret = data_dir / "admin-token.txt"
    secret.write_text("host secret 9f8e7d")
    worker = await launch(make_spec(tmp_path / "worker"))
    try:
        data = await run_probe(
            worker,
            f"""
            import os
            def ls(path):
                try:
                    return sorted(os.listdir(path))
                except OSError as e:
                    return type(e).__name__
            def read(path):
                try:
                    with open(path) as f:
                        return f.read()
                except OSError as e:
                    return type(e).__name__
            result = {{
                "shadow": read("/etc/shadow"),
                "secret": read({str(secret)!r}),
                "data_dir": ls({str(data_dir)!r}),
                "root": ls("/root"),
                "home": ls("/home"),
                "etc": ls("/etc"),
                "passwd": read("/etc/passwd"),
                "sys": ls("/sys"),
                "pids": [p for p in ls("/proc") if p.isdigit()],
            }}
            """,
        )
    finally:
        await worker.stop()
    found = data["result"]
    assert found["shadow"] == "FileNotFoundError"
    assert found["secret"] == "FileNotFoundError"
    assert found["data_dir"] == "FileNotFoundError"
    assert found["home"] == "FileNotFoundError"
    # bubblewrap: no /sys; gVisor: an empty one over the synthetic /sys it would make
    assert found["sys"] == ("FileNotFoundError" if isolation == "bubblewrap" else [])
    # only the interpreter's own prefix shows under /root (its RUNPATH needs that path)
    assert found["root"] in ("FileNotFoundError", [".pyenv"])
    assert set(found["etc"]) <= {
        "passwd",
        "group",
        "hosts",
        "nsswitch.conf",
        "ld.so.cache",
        "ssl",
        "ca-certificates",
    }
    assert "root:x:0:0" in found["passwd"]
    assert len(found["passwd"].splitlines()) == 2  # ours, not the host's
    # its own pid namespace: the sandbox's pid 1 and the runtime (+ threads' nothing)
    assert len(found["pids"]) <= 3
    assert "host secret" not in worker.spec.log_file.read_text()

"""The client-side commands start without the server's dependencies (issue 31).

The start time itself is measured in bench/cli_start.py (no timed assertion here); what
makes it fast is that a client command never imports httpx, pydantic, the settings or
the gateway, which this checks in a fresh interpreter, command by command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["httpx", "pydantic", "sless.config", "sless.gateway", "sless.store", "rich"]

PROBE = """
import json, sys
from sless.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except BaseException:
    pass
print(json.dumps(sorted(m for m in sys.modules)))
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["deploy", "--help"], ["ls"], ["whoami"], ["invocations"], ["trigger", "ls"]],
)
def test_client_command_imports_nothing_heavy(args: list[str]) -> None:
    env = {"SLESS_URL": "http://127.0.0.1:9", "SLESS_TOKEN": "sl_t_x", "PATH": "/usr/bin"}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, check=True
    )
    modules = set(json.loads(run.stdout.splitlines()[-1]))
    assert "sless.cli" in modules
    loaded = [m for m in HEAVY if m in modules]
    assert loaded == [], f"sless {' '.join(args)} imported {loaded}"

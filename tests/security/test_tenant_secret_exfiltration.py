"""Attack: read another tenant's secret through a function spec, or a function's secret
from the host's process list.

Tenant B names tenant A's secret in its own function (by bare name, qualified, or with an
extra ``namespace`` field): 422 every time, never a worker with A's value. And while a
function that uses a secret runs, no process on the host carries the value on its command
line (bubblewrap gets the worker's environment through a memfd).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

VALUE = "tenant-a-db-password-5d1e0b"
READS = {
    "handler.py": (
        "import os\n"
        "def handle(event, context):\n"
        "    return {'set': bool(os.environ.get('DB_PASSWORD'))}\n"
    )
}


def test_tenant_b_cannot_name_tenant_a_secret(gateway: RunningGateway) -> None:
    a, b = gateway.tenant("alpha"), gateway.tenant("bravo")
    assert a.put("/v1/namespaces/sless-alpha/secrets/db", json={"value": VALUE}).status_code == 201
    for ref in (
        {"name": "db", "env": "DB_PASSWORD"},
        {"name": "sless-alpha/db", "env": "DB_PASSWORD"},
        {"name": "db", "env": "DB_PASSWORD", "namespace": "sless-alpha"},
    ):
        response = b.put("/v1/namespaces/sless-bravo/functions/steal", json={"secrets": [ref]})
        assert response.status_code == 422, response.text
        assert VALUE not in response.text
    # nor by writing into A's namespace
    response = b.put("/v1/namespaces/sless-alpha/functions/steal", json={"secrets": [ref]})
    assert response.status_code == 404
    assert b.get("/v1/namespaces/sless-bravo/functions/steal").status_code == 404


def test_a_running_functions_secret_is_in_no_command_line(gateway: RunningGateway) -> None:
    a = gateway.tenant("alpha")
    assert a.put("/v1/namespaces/sless-alpha/secrets/db", json={"value": VALUE}).status_code == 201
    spec = {"secrets": [{"name": "db", "env": "DB_PASSWORD"}], "min_instances": 1}
    function = deploy(a, "sless-alpha", "uses", READS, spec)
    assert function["status"]["phase"] == "Ready", function["status"]
    assert httpx.get(f"{gateway.url}/fn/sless-alpha/uses").json() == {"set": True}
    cmdlines = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                cmdlines.append(proc.joinpath("cmdline").read_bytes())
    # a worker is running (bubblewrap's, or gVisor's runsc) while the command lines are read
    assert any(b"bwrap" in c or b"server.py" in c or b"runsc" in c for c in cmdlines)
    assert not [c for c in cmdlines if VALUE.encode() in c]

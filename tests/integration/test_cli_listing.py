"""``sless ls`` against a real gateway: a function whose only upload validation refused
reads ``Rejected`` with the reason, not ``Pending`` for ever (issue 31): the API says so
(``sless.functions.uploading.refused_phase``) and the CLI shows what the API says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunningGateway
from tests.support import deploy, make_zip

pytestmark = pytest.mark.integration

SLESS = str(Path(sys.executable).parent / "sless")
OK = {"handler.py": "def handle(event, context):\n    return {'ok': True}\n"}


def test_a_refused_first_upload_lists_as_rejected_with_its_reason(
    gateway: RunningGateway, tmp_path: Path
) -> None:
    token = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()["token"]
    acme = gateway.client(token)
    deploy(acme, "sless-acme", "fine", OK)
    path = "/v1/namespaces/sless-acme/functions/broken"
    assert acme.put(path, json={"runtime": "python3.11"}).status_code == 201
    refused = acme.post(
        path + "/upload",
        content=make_zip({"handler.py": "def handle(event, context):\n    return {{\n"}),
        headers={"Content-Type": "application/zip"},
    )
    assert refused.status_code == 422
    # no code will run: the API says Rejected with the reason, and the CLI shows the same
    status = acme.get(path).json()["status"]
    assert status["phase"] == "Rejected"
    assert status["message"].startswith("upload rejected: syntax error"), status

    env = {
        **os.environ,
        "SLESS_URL": gateway.url,
        "SLESS_TOKEN": token,
        "XDG_CONFIG_HOME": str(tmp_path),
    }
    listed = subprocess.run([SLESS, "ls"], env=env, capture_output=True, text=True, check=True)
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[1:]}
    assert rows["broken"].split()[2] == "Rejected"
    assert "upload rejected: syntax error" in rows["broken"]
    assert rows["fine"].split()[2] == "Ready"
    assert rows["fine"].endswith("/fn/sless-acme/fine")

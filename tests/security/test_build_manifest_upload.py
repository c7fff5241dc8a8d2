"""Attack: a tenant uploads a manifest that makes the build fetch from a host of its choice
or read a host path, through the documented API (``POST .../upload``).

Two used to pass the upload's checks: a package.json dependency given as an absolute path
(``"leak": "/etc/leak"``, which npm reads as a local package: no rule knew the form) and a
package-lock.json whose ``resolved`` URL points at a loopback listener (the lockfile was not
read at all). Both must be refused at upload with a 4xx that names the offending entry,
through the same policy the build checks again (sless.policies.manifests), and the
function must never reach Ready with them. Real gateway, PostgreSQL and semgrep.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.security.test_build_manifest_escape import Listener, listener, lockfile
from tests.support import make_zip

pytestmark = pytest.mark.integration

__all__ = ["listener"]  # fixture

NS = "sless-acme"
FN = f"/v1/namespaces/{NS}/functions"
NODE_HANDLER = {"handler.js": "exports.handle = async () => 'ok';\n"}
PY_HANDLER = {"handler.py": "def handle(event, context):\n    return 'ok'\n"}


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def upload(acme: httpx.Client, name: str, runtime: str, files: dict[str, str]) -> httpx.Response:
    response = acme.put(f"{FN}/{name}", json={"runtime": runtime})
    assert response.status_code in (200, 201), response.text
    return acme.post(
        f"{FN}/{name}/upload",
        content=make_zip(files),
        headers={"Content-Type": "application/zip"},
    )


def reasons(response: httpx.Response) -> list[str]:
    body: dict[str, Any] = response.json()
    findings = body["error"]["details"]["findings"]
    return [f["message"] for f in findings if f.get("rule") == "dependency-not-allowed"]


def test_npm_absolute_path_dependency_is_refused_at_upload(acme: httpx.Client) -> None:
    manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"leak": "/etc/leak"}}
    files = {**NODE_HANDLER, "package.json": json.dumps(manifest, indent=2)}
    response = upload(acme, "abs-path", "nodejs20", files)
    assert response.status_code == 422, response.text
    assert any("package.json dependencies.leak" in r for r in reasons(response)), response.text
    phase = acme.get(f"{FN}/abs-path").json()["status"]["phase"]
    assert phase != "Ready"


def test_lockfile_resolved_off_registry_is_refused_at_upload(
    acme: httpx.Client, listener: Listener
) -> None:
    manifest = {"name": "fn", "version": "1.0.0", "dependencies": {"left-pad": "^1.3.0"}}
    files = {
        **NODE_HANDLER,
        "package.json": json.dumps(manifest),
        "package-lock.json": lockfile(f"{listener.url}/left-pad/-/left-pad-1.3.0.tgz"),
    }
    response = upload(acme, "lock", "nodejs20", files)
    assert response.status_code == 422, response.text
    found = reasons(response)
    assert any("package-lock.json node_modules/left-pad" in r for r in found), response.text
    assert listener.requests == []


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("six\n-r /etc/shadow\n", 2),
        ("--extra-index-url http://127.0.0.1:9/simple\nsix\n", 1),
        ("six\n\nleak @ file:///etc/shadow\n", 3),
        ("six\n-e ./pkg\n", 2),
        ("six --config-settings editable_mode=compat\n", 1),
    ],
)
def test_requirement_options_and_urls_are_refused_at_upload_naming_the_line(
    acme: httpx.Client, line: str, number: int
) -> None:
    files = {**PY_HANDLER, "requirements.txt": line, "pkg/setup.py": "print('built')\n"}
    response = upload(acme, "reqs", "python3.11", files)
    assert response.status_code == 422, response.text
    assert any(f"requirements.txt line {number}:" in r for r in reasons(response)), response.text
    assert "root:" not in response.text

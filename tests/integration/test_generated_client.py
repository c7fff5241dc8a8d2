"""A client generated from the committed docs/openapi.json talks to the running platform.

openapi-python-client (a dev dependency, used only here) generates the package into the
test's temporary directory; the test compiles every module, imports it and walks a
paged list, an If-Match conflict and an error answer through it.
"""

from __future__ import annotations

import compileall
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import RunningGateway

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NS = "sless-acme"


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[ModuleType]:
    config = tmp_path / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run over the output
    out = tmp_path / "sless_client"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(ROOT / "docs" / "openapi.json"),
            "--config",
            str(config),
            "--output-path",
            str(out),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    assert compileall.compile_dir(str(out), quiet=1)
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("sless_client")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [
            m for m in sys.modules if m == "sless_client" or m.startswith("sless_client.")
        ]:
            del sys.modules[name]


def _api(name: str) -> Any:
    return importlib.import_module(f"sless_client.api.default.{name}")


def test_generated_client_smoke(generated: ModuleType, gateway: RunningGateway) -> None:
    models = importlib.import_module("sless_client.models")
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"}).json()
    with generated.AuthenticatedClient(base_url=gateway.url, token=created["token"]) as client:
        whoami = _api("whoami").sync(client=client)
        assert whoami["namespace"] == NS

        for i in range(3):
            body = models.PutFunctionBody.from_dict({"runtime": "python3.11"})
            response = _api("put_function").sync_detailed(NS, f"f{i}", client=client, body=body)
            assert response.status_code == 201, response.content
        tag = response.headers["ETag"]

        names: list[str] = []
        cursor = None
        while True:
            page = _api("list_functions").sync(NS, client=client, limit=2, cursor=cursor)
            assert isinstance(page, models.FunctionPage), page
            assert page.total == 3
            names += [item["name"] for item in page.functions]
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        assert names == ["f0", "f1", "f2"]

        body = models.PutFunctionBody.from_dict({"runtime": "python3.11", "memory_mb": 256})
        ok = _api("put_function").sync_detailed(NS, "f2", client=client, body=body, if_match=tag)
        assert ok.status_code == 200
        stale = _api("put_function").sync(NS, "f2", client=client, body=body, if_match=tag)
        assert isinstance(stale, models.ErrorBody)
        assert stale.error.code == "precondition_failed"

        missing = _api("get_function").sync(NS, "nope", client=client)
        assert isinstance(missing, models.ErrorBody)
        assert missing.error.code == "not_found"

        invocations = _api("get_invocations").sync(NS, client=client, limit=10)
        assert isinstance(invocations, models.InvocationPage)
        assert invocations.count == 0
        assert invocations.next_cursor is None

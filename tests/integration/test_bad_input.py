"""Bad input gets a clear 4xx JSON error and leaves nothing behind."""

from __future__ import annotations

import io
import zipfile

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import deploy, make_zip, wait_phase

pytestmark = pytest.mark.integration

FN = "/v1/namespaces/sless-acme/functions"
HELLO = {"handler.py": "def handle(event, context):\n    return 'v1'\n"}


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def _error(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    assert error["code"]
    assert error["message"]
    return error


@pytest.mark.parametrize("name", ["Upper", "-dash", "dash-", "a_b", "x" * 64, "a.b"])
def test_invalid_function_name(acme: httpx.Client, name: str) -> None:
    error = _error(acme.put(f"{FN}/{name}", json={}), 422)
    assert "DNS-1123" in error["message"]
    assert acme.get(FN).json()["count"] == 0


def test_unknown_runtime(acme: httpx.Client) -> None:
    error = _error(acme.put(f"{FN}/f", json={"runtime": "cobol85"}), 422)
    assert "runtime" in error["message"]


def test_unknown_spec_field_and_code_in_spec(acme: httpx.Client) -> None:
    _error(acme.put(f"{FN}/f", json={"memroy_mb": 128}), 422)
    error = _error(acme.put(f"{FN}/f", json={"code": {"sha256": "0" * 64}}), 422)
    assert "upload" in error["message"]


def test_bad_json(acme: httpx.Client) -> None:
    response = acme.put(
        f"{FN}/f", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    _error(response, 422)


def test_missing_and_wrong_token(gateway: RunningGateway) -> None:
    error = _error(httpx.get(f"{gateway.url}{FN}"), 401)
    assert "token" in error["message"]
    wrong = httpx.get(f"{gateway.url}{FN}", headers={"Authorization": "Bearer sl_t_wrong"})
    _error(wrong, 401)
    assert wrong.headers["www-authenticate"] == "Bearer"
    malformed = httpx.get(f"{gateway.url}{FN}", headers={"Authorization": "Basic abc"})
    _error(malformed, 401)


def test_other_namespace_is_404_like_a_missing_one(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    gateway.tenant("rival")
    theirs = _error(acme.get("/v1/namespaces/sless-rival/functions"), 404)
    missing = _error(acme.get("/v1/namespaces/sless-nobody/functions"), 404)
    assert theirs["code"] == missing["code"] == "not_found"


def test_upload_not_a_zip(acme: httpx.Client) -> None:
    acme.put(f"{FN}/f", json={})
    error = _error(acme.post(f"{FN}/f/upload", content=b"just text"), 422)
    assert error["code"] == "validation_rejected"
    rules = [f["rule"] for f in error["details"]["findings"]]  # type: ignore[index]
    assert rules == ["archive-not-zip"]
    # nothing will make it run: the API says so, with the reason (as the CLI and console)
    status = acme.get(f"{FN}/f").json()["status"]
    assert status["phase"] == "Rejected"
    assert status["message"].startswith("upload rejected: ")
    assert status["validation"]["verdict"] == "reject"


def test_upload_to_a_missing_function(acme: httpx.Client) -> None:
    _error(acme.post(f"{FN}/ghost/upload", content=make_zip(HELLO)), 404)


def test_upload_oversized(gateway: RunningGateway, acme: httpx.Client) -> None:
    acme.put(f"{FN}/f", json={})
    limit = gateway.settings.gateway.max_upload_bytes
    _error(acme.post(f"{FN}/f/upload", content=b"\0" * (limit + 1)), 413)


def test_upload_without_the_entrypoint(acme: httpx.Client) -> None:
    acme.put(f"{FN}/f", json={})
    error = _error(acme.post(f"{FN}/f/upload", content=make_zip({"main.py": "x = 1\n"})), 422)
    assert [f["rule"] for f in error["details"]["findings"]] == ["entrypoint-missing"]  # type: ignore[index]
    report = acme.get(f"{FN}/f/validation").json()
    assert report["verdict"] == "reject"


def test_upload_with_a_syntax_error(acme: httpx.Client) -> None:
    acme.put(f"{FN}/f", json={})
    error = _error(
        acme.post(f"{FN}/f/upload", content=make_zip({"handler.py": "def handle(:\n"})), 422
    )
    finding = error["details"]["findings"][0]  # type: ignore[index]
    assert finding["rule"] == "entrypoint-syntax-error"
    assert finding["line"] == 1


def test_upload_zip_slip(acme: httpx.Client) -> None:
    acme.put(f"{FN}/f", json={})
    evil = make_zip({**HELLO, "../../etc/evil.py": "x = 1\n"})
    error = _error(acme.post(f"{FN}/f/upload", content=evil), 422)
    assert "archive-unsafe-path" in [f["rule"] for f in error["details"]["findings"]]  # type: ignore[index]
    rejected = acme.get(f"{FN}/f").json()["status"]
    assert rejected["phase"] == "Rejected", rejected
    assert rejected["message"].startswith("upload rejected: "), rejected
    assert rejected["version"] is None
    # a spec written again changes nothing that runs: still Rejected, for the same reason
    assert acme.put(f"{FN}/f", json={"memory_mb": 256}).status_code == 200
    assert acme.get(f"{FN}/f").json()["status"]["phase"] == "Rejected"
    # a good upload then builds and serves it
    assert acme.post(f"{FN}/f/upload", content=make_zip(HELLO)).status_code == 202
    assert wait_phase(acme, f"{FN}/f", {"Ready", "Failed"})["status"]["phase"] == "Ready"


def test_rejected_upload_leaves_the_previous_version_serving(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, "sless-acme", "f", HELLO)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", HELLO["handler.py"])
        link = zipfile.ZipInfo("link")
        link.external_attr = 0o120777 << 16
        archive.writestr(link, "/etc/passwd")
    _error(acme.post(f"{FN}/f/upload", content=buffer.getvalue()), 422)
    assert httpx.get(f"{gateway.url}/fn/sless-acme/f").json() == "v1"
    function = acme.get(f"{FN}/f").json()
    # the function stays Ready on its serving version; the refused upload is reported in
    # its validation, not in its phase
    assert function["status"]["phase"] == "Ready"
    assert function["status"]["message"] == ""
    assert function["status"]["version"] == "v1"
    assert function["status"]["validation"]["verdict"] == "reject"


def test_bad_egress_and_env(acme: httpx.Client) -> None:
    _error(acme.put(f"{FN}/f", json={"egress": ["example.com"]}), 422)
    _error(acme.put(f"{FN}/f", json={"env": {"LD_PRELOAD": "/x.so"}}), 422)
    _error(acme.put(f"{FN}/f", json={"memory_mb": 1}), 422)


def test_admin_api_refuses_tenant_tokens(acme: httpx.Client) -> None:
    _error(acme.get("/v1/admin/tenants"), 401)


def test_tenant_name_rules(gateway: RunningGateway) -> None:
    _error(gateway.admin.post("/v1/admin/tenants", json={"name": "Bad_Name"}), 422)
    assert gateway.admin.post("/v1/admin/tenants", json={"name": "dup"}).status_code == 201
    _error(gateway.admin.post("/v1/admin/tenants", json={"name": "dup"}), 409)

"""The provider's review queue: an upload the LLM finds suspicious is held until an admin
approves or rejects it. The model is the local fake OpenAI-compatible server (the only
fake allowed); the gateway, PostgreSQL, semgrep and the sandbox are real."""

from __future__ import annotations

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import make_zip, wait_phase, with_llm

pytestmark = pytest.mark.integration

FN = "/v1/namespaces/sless-acme/functions"
CODE = {"handler.py": "def handle(event, context):\n    return 'reviewed'\n"}


@pytest.fixture
def settings(settings: Settings, llm: FakeLLM) -> Settings:
    return with_llm(settings, llm)


def _held(acme: httpx.Client, name: str) -> int:
    acme.put(f"{FN}/{name}", json={})
    response = acme.post(f"{FN}/{name}/upload", content=make_zip(CODE))
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["verdict"] == "review"
    assert body["phase"] == "Validating"
    review_id: int = body["review_id"]
    return review_id


def test_suspicious_upload_waits_for_approval(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("suspicious", [{"file": "handler.py", "line": 2, "reason": "odd"}]))
    acme = gateway.tenant("acme")
    review_id = _held(acme, "held")
    assert httpx.get(f"{gateway.url}/fn/sless-acme/held").status_code == 503
    # held code is a version that cannot serve: no split nor rollback may name it
    [held] = acme.get(f"{FN}/held/versions").json()["versions"]
    assert (held["version"], held["state"]) == ("v1", "held")
    refused = acme.post(f"{FN}/held/rollback", json={"version": "v1"})
    assert refused.status_code == 422
    assert "it is held" in refused.text

    pending = gateway.admin.get("/v1/admin/reviews").json()["reviews"]
    assert [r["id"] for r in pending] == [review_id]
    assert pending[0]["report"]["verdict"] == "review"
    # tenants cannot see or act on the queue
    assert acme.get("/v1/admin/reviews").status_code == 401
    assert (
        acme.post(f"/v1/admin/reviews/{review_id}/approve", json={"reason": "me"}).status_code
        == 401
    )

    decided = gateway.admin.post(
        f"/v1/admin/reviews/{review_id}/approve", json={"reason": "looked at it"}
    )
    assert decided.status_code == 200
    assert decided.json()["state"] == "approved"
    assert decided.json()["decided_by"].startswith("admin-token-")
    wait_phase(acme, f"{FN}/held", {"Ready"})
    assert httpx.get(f"{gateway.url}/fn/sless-acme/held").json() == "reviewed"
    assert acme.get(f"{FN}/held/versions").json()["versions"][0]["state"] == "allowed"
    again = gateway.admin.post(f"/v1/admin/reviews/{review_id}/reject", json={"reason": "late"})
    assert again.status_code == 409


def test_rejected_review_never_runs(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("suspicious"))
    acme = gateway.tenant("acme")
    review_id = _held(acme, "shady")
    assert gateway.admin.post(f"/v1/admin/reviews/{review_id}/reject", json={}).status_code == 422
    rejected = gateway.admin.post(f"/v1/admin/reviews/{review_id}/reject", json={"reason": "miner"})
    assert rejected.json()["state"] == "rejected"
    function = acme.get(f"{FN}/shady").json()
    assert function["status"]["phase"] == "Rejected"
    assert "miner" in function["status"]["message"]
    assert httpx.get(f"{gateway.url}/fn/sless-acme/shady").status_code == 503
    assert acme.get(f"{FN}/shady/versions").json()["versions"][0]["state"] == "rejected"
    history = gateway.admin.get("/v1/admin/reviews", params={"state": "all"}).json()
    assert [(r["id"], r["reason"]) for r in history["reviews"]] == [(review_id, "miner")]


def test_malicious_verdict_rejects_the_upload(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("malicious", [{"file": "handler.py", "line": 1, "reason": "bad"}]))
    acme = gateway.tenant("acme")
    acme.put(f"{FN}/evil", json={})
    response = acme.post(f"{FN}/evil/upload", content=make_zip(CODE))
    assert response.status_code == 422
    sources = {f["source"] for f in response.json()["error"]["details"]["findings"]}
    assert sources == {"llm"}


def test_the_same_code_is_never_reviewed_twice(gateway: RunningGateway, llm: FakeLLM) -> None:
    llm.always(verdict("benign"))
    acme = gateway.tenant("acme")
    source = "def handle(event, context):\n    return 1\n\ndef other(e, c):\n    return 2\n"
    code = {"handler.py": source}
    for name, entrypoint in (("one", "handler.handle"), ("two", "handler.other")):
        acme.put(f"{FN}/{name}", json={"entrypoint": entrypoint})
        response = acme.post(f"{FN}/{name}/upload", content=make_zip(code))
        assert response.status_code == 202, response.text
        assert response.json()["verdict"] == "allow"
    # two reports (the entrypoint differs) but one review of the code by the model
    assert len(llm.requests) == 1

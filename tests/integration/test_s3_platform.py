"""The platform with its code blobs in S3 (a real S3 API server reached over HTTP)."""

from __future__ import annotations

import time

import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, new_bucket, s3_client

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings, s3_endpoint: str) -> Settings:
    bucket = new_bucket(s3_endpoint, prefix="sless-")
    settings.s3.bucket = bucket
    settings.s3.endpoint_url = s3_endpoint
    settings.s3.access_key_id = SecretStr("test")
    settings.s3.secret_access_key = SecretStr("test")
    return settings


def test_code_is_stored_in_s3_and_served(gateway: RunningGateway, settings: Settings) -> None:
    acme = gateway.tenant("acme")
    code = {"handler.py": "def handle(event, context):\n    return 'from s3'\n"}
    function = deploy(acme, "sless-acme", "s3fn", code)
    assert function["status"]["phase"] == "Ready", function["status"]
    assert httpx.get(f"{gateway.url}/fn/sless-acme/s3fn").json() == "from s3"
    assert settings.s3.endpoint_url is not None
    client = s3_client(settings.s3.endpoint_url)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=settings.s3.bucket)["Contents"]]
    assert keys == [f"code/{function['spec']['code']['sha256']}.zip"]
    assert not (gateway.settings.data_dir / "blobs").exists()
    acme.delete("/v1/namespaces/sless-acme/functions/s3fn")
    assert client.list_objects_v2(Bucket=settings.s3.bucket).get("KeyCount") == 0


def test_pruned_versions_lose_their_s3_blobs_and_a_rollback_reads_none(
    gateway: RunningGateway, settings: Settings
) -> None:
    """Versions beyond ``limits.max_versions`` go with their code; a kept one rolls back."""
    settings.limits.max_versions = 2
    acme = gateway.tenant("acme")
    assert settings.s3.endpoint_url is not None
    client = s3_client(settings.s3.endpoint_url)

    def keys() -> set[str]:
        listed = client.list_objects_v2(Bucket=settings.s3.bucket)
        return {o["Key"] for o in listed.get("Contents", [])}

    shas = []
    for marker in ("a", "b", "c"):
        code = {"handler.py": f"def handle(event, context):\n    return {marker!r}\n"}
        function = deploy(acme, "sless-acme", "gc", code)
        assert function["status"]["phase"] == "Ready", function["status"]
        shas.append(function["spec"]["code"]["sha256"])
    assert keys() == {f"code/{shas[1]}.zip", f"code/{shas[2]}.zip"}
    rolled = acme.post("/v1/namespaces/sless-acme/functions/gc/rollback", json={"version": "v2"})
    assert rolled.status_code == 200, rolled.text
    refused = acme.post("/v1/namespaces/sless-acme/functions/gc/rollback", json={"version": "v1"})
    assert refused.status_code == 422
    assert "has no version v1" in refused.text
    deadline = time.monotonic() + 60
    while httpx.get(f"{gateway.url}/fn/sless-acme/gc").text != '"b"':
        assert time.monotonic() < deadline, "v2 never served again"
        time.sleep(0.2)
    acme.delete("/v1/namespaces/sless-acme/functions/gc")
    assert keys() == set()

"""The platform with its code blobs in S3 (a real S3 API server reached over HTTP)."""

from __future__ import annotations

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

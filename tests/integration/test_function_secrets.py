"""Secrets in functions, embedded mode: real PostgreSQL, real bubblewrap workers.

A function names secrets of its own namespace (``secrets: [{"name", "env"}]``); the
worker gets the values as environment variables. The values are encrypted at rest, a new
value rolls the workers, a missing or foreign secret is a 422 at PUT, and the value shows
up in no output the platform produces (the last test greps every one of them).
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from sless.store import (
    SecretKeyError,
    SecretRepository,
    UndecryptableSecret,
    cipher_for,
    create_pool,
    migrate,
)
from sless.store.crypto import load_cipher, parse_keys
from tests.conftest import RunningGateway
from tests.support import deploy

pytestmark = pytest.mark.integration

SLESS = str(Path(sys.executable).parent / "sless")

NS = "sless-acme"
VALUE = "hunter2-" + "s3cr3t-value-9f2c"
READS_SECRET = {
    "handler.py": (
        "import hashlib, os\n"
        "def handle(event, context):\n"
        "    value = os.environ.get('DB_PASSWORD', '')\n"
        "    return {'sha256': hashlib.sha256(value.encode()).hexdigest()}\n"
    )
}
SPEC = {"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]}


def sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def wait_for_hash(url: str, expected: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(url, timeout=30)
        if response.status_code == 200 and response.json()["sha256"] == expected:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the function never saw the expected value: {response.text}")
        time.sleep(0.2)


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def put_secret(client: httpx.Client, name: str, value: str, ns: str = NS) -> None:
    response = client.put(f"/v1/namespaces/{ns}/secrets/{name}", json={"value": value})
    assert response.status_code in (200, 201), response.text


def test_a_function_gets_its_secret_and_a_new_value_rolls_its_workers(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    put_secret(acme, "dbpass", VALUE)
    function = deploy(acme, NS, "reader", READS_SECRET, SPEC)
    assert function["status"]["phase"] == "Ready", function["status"]
    url = f"{gateway.url}/fn/{NS}/reader"
    assert httpx.get(url).json() == {"sha256": sha(VALUE)}

    put_secret(acme, "dbpass", VALUE + "-rotated")
    wait_for_hash(url, sha(VALUE + "-rotated"))


def test_a_missing_secret_is_a_422_at_put(acme: httpx.Client) -> None:
    response = acme.put(f"/v1/namespaces/{NS}/functions/reader", json=SPEC)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid"
    assert "'dbpass' not found" in response.json()["error"]["message"]
    assert acme.get(f"/v1/namespaces/{NS}/functions/reader").status_code == 404


def test_a_secret_of_another_namespace_cannot_be_named(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    other = gateway.tenant("other")
    put_secret(other, "dbpass", VALUE, ns="sless-other")
    # the spec has no way to say another namespace, and the name alone is looked up in
    # the caller's own namespace
    response = acme.put(f"/v1/namespaces/{NS}/functions/reader", json=SPEC)
    assert response.status_code == 422, response.text
    qualified = {"secrets": [{"name": "sless-other/dbpass", "env": "DB_PASSWORD"}]}
    response = acme.put(f"/v1/namespaces/{NS}/functions/reader", json=qualified)
    assert response.status_code == 422, response.text
    extra = {"secrets": [{"name": "dbpass", "env": "X", "namespace": "sless-other"}]}
    response = acme.put(f"/v1/namespaces/{NS}/functions/reader", json=extra)
    assert response.status_code == 422, response.text


def test_the_value_appears_in_no_output(
    gateway: RunningGateway, acme: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    put_secret(acme, "dbpass", VALUE)
    deploy(acme, NS, "reader", READS_SECRET, SPEC)
    # a function whose import fails prints a traceback into its logs and its status
    broken = {
        "handler.py": (
            "import os\n"
            "def handle(event, context):\n"
            "    return {}\n"
            "raise RuntimeError('boom, with %d variables' % len(os.environ))\n"
        )
    }
    failed = deploy(acme, NS, "broken", broken, SPEC, expect="Failed")
    assert failed["status"]["phase"] == "Failed"
    assert "boom" in failed["status"]["message"]
    assert httpx.get(f"{gateway.url}/fn/{NS}/reader").status_code == 200
    put_secret(acme, "dbpass", VALUE)  # a rewrite: rolls the workers, logs what it does
    base = f"/v1/namespaces/{NS}"
    outputs = {
        "gateway log": caplog.text,
        "function": acme.get(f"{base}/functions/reader").text,
        "functions": acme.get(f"{base}/functions").text,
        "broken function": acme.get(f"{base}/functions/broken").text,
        "function logs": acme.get(f"{base}/functions/reader/logs").text,
        "broken logs": acme.get(f"{base}/functions/broken/logs").text,
        "validation": acme.get(f"{base}/functions/reader/validation").text,
        "secret": acme.get(f"{base}/secrets/dbpass").text,
        "secrets": acme.get(f"{base}/secrets").text,
        "invocations": acme.get(f"{base}/invocations").text,
        "audit": acme.get(f"{base}/audit").text,
        "admin audit": gateway.admin.get("/v1/admin/audit").text,
        "metrics": gateway.admin.get("/metrics").text,
        "tenant metrics": acme.get(f"{base}/metrics").text,
    }
    for where, text in outputs.items():
        assert VALUE not in text, f"the secret's value is in the {where}"
    for path in Path(gateway.settings.data_dir).rglob("*"):
        if path.is_file():
            assert VALUE.encode() not in path.read_bytes(), f"the value is on disk in {path}"


async def test_values_are_sealed_at_rest_and_rotate_to_a_new_key(
    database_url: str, tmp_path: Path
) -> None:
    old = parse_keys("k1:" + "A" * 43 + "=")
    db: asyncpg.Pool = await create_pool(database_url)
    try:
        await migrate(db)
        await db.execute("INSERT INTO tenants (name, namespace) VALUES ('acme', $1)", NS)
        await SecretRepository(db, old).put(NS, "dbpass", SecretStr(VALUE))
        row = await db.fetchrow("SELECT value, key_id, sealed FROM secrets")
        assert row["value"] is None
        assert row["key_id"] == "k1"
        assert VALUE.encode() not in bytes(row["sealed"])
        # a row from before encryption (plaintext) is sealed by the same pass
        await db.execute(
            "INSERT INTO secrets (namespace, name, value) VALUES ($1, 'legacy', 'plain-old')", NS
        )

        rotated = parse_keys("k2:" + "B" * 43 + "=, k1:" + "A" * 43 + "=")
        repo = SecretRepository(db, rotated)
        assert (await repo.reveal(NS, "dbpass"))[0].get_secret_value() == VALUE
        assert await repo.reencrypt() == 2
        assert await repo.reencrypt() == 0
        assert {r["key_id"] for r in await db.fetch("SELECT key_id FROM secrets")} == {"k2"}

        only_new = SecretRepository(db, parse_keys("k2:" + "B" * 43 + "="))
        assert (await only_new.reveal(NS, "legacy"))[0].get_secret_value() == "plain-old"
        with pytest.raises(UndecryptableSecret) as caught:
            await SecretRepository(db, old).reveal(NS, "dbpass")
        assert VALUE not in str(caught.value)
        # a sealed value moved onto another secret's row does not decrypt
        await db.execute(
            "UPDATE secrets SET key_id = 'k2', value = NULL,"
            " sealed = (SELECT sealed FROM secrets WHERE name = 'dbpass') WHERE name = 'legacy'"
        )
        with pytest.raises(UndecryptableSecret):
            await only_new.reveal(NS, "legacy")
    finally:
        await db.close()


def test_development_generates_a_private_key_and_production_refuses(tmp_path: Path) -> None:
    cipher = load_cipher(None, tmp_path, production=False)
    key_file = tmp_path / "secrets.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert load_cipher(None, tmp_path, production=False).primary == cipher.primary == "dev"
    with pytest.raises(Exception, match="SLESS_SECRETS_KEYS is not set"):
        load_cipher(None, tmp_path / "other", production=True)
    kube = Settings(_env_file=None, backend="kubernetes", data_dir=tmp_path)  # type: ignore[call-arg]
    with pytest.raises(SecretKeyError, match="every gateway replica and sless events"):
        cipher_for(kube)
    with pytest.raises(Exception, match="32-byte keys") as caught:
        load_cipher(SecretStr("k1:c2hvcnQ="), tmp_path, production=True)
    assert "c2hvcnQ" not in str(caught.value)


def test_sless_deploy_secret_sets_the_spec_field(gateway: RunningGateway, tmp_path: Path) -> None:
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    token = created.json()["token"]
    acme = gateway.client(token)
    put_secret(acme, "dbpass", VALUE)
    code = tmp_path / "code"
    code.mkdir()
    (code / "handler.py").write_text(READS_SECRET["handler.py"])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}

    def sless(*args: str) -> subprocess.CompletedProcess[str]:
        command = [SLESS, *args, "--url", gateway.url, "--token", token]
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    result = sless("deploy", str(code), "--name", "reader", "--secret", "dbpass=DB_PASSWORD")
    assert result.returncode == 0, result.stdout + result.stderr
    spec = acme.get(f"/v1/namespaces/{NS}/functions/reader").json()["spec"]
    assert spec["secrets"] == [{"name": "dbpass", "env": "DB_PASSWORD"}]
    assert httpx.get(f"{gateway.url}/fn/{NS}/reader").json() == {"sha256": sha(VALUE)}
    bad = sless("deploy", str(code), "--name", "x", "--secret", "dbpass")
    assert bad.returncode != 0
    assert "--secret takes NAME=ENV" in bad.stderr

"""Attack: a tenant creates objects without end to fill the platform (500 cron triggers in
7 s; jobs, secrets, tokens, versions, queued calls; 64 MiB of logs per function).

Every kind a tenant can create is refused past its limit with 403 ``quota_exceeded``
naming the limit, and the count stored stays at the limit, concurrent creates included;
logs stay under the tenant's byte limit on disk; ``GET /v1/limits`` shows each limit and
its use; a limit the provider sets for one tenant applies to it alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, make_zip, wait_for

pytestmark = pytest.mark.integration

NS = "/v1/namespaces/sless-acme"
CRON = {"type": "cron", "function": "f", "schedule": "0 0 1 1 *"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    limits = settings.limits
    limits.max_triggers = 5
    limits.max_jobs = 3
    limits.max_secrets = 4
    limits.max_secret_bytes = 3000
    limits.max_tokens = 3
    limits.max_versions = 2
    limits.max_queued_calls = 2
    limits.max_log_bytes = 256 * 1024
    settings.validation.static_enabled = False  # counting, not what validation finds
    settings.validation.detonation_enabled = False  # the attack must run to be contained
    return settings


def refused(response: httpx.Response, quota: str, limit: int) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert error["details"]["quota"] == quota
    assert error["details"]["limit"] == limit
    assert f"quota {quota} exceeded" in error["message"]
    assert f"the limit is {limit}" in error["message"]
    return error


def create_until_refused(create: Callable[[int], httpx.Response], most: int = 50) -> int:
    """Create objects 0, 1, 2... until one is refused; returns how many were created."""
    for i in range(most):
        response = create(i)
        if response.status_code == 403:
            return i
        assert response.status_code == 201, response.text
    raise AssertionError(f"{most} objects created, none refused")


def a_function(client: httpx.Client, name: str = "f") -> None:
    assert client.put(f"{NS}/functions/{name}", json={}).status_code == 201


def test_cron_triggers_are_refused_past_the_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    a_function(acme)
    created = create_until_refused(lambda i: acme.put(f"{NS}/triggers/t{i}", json=CRON))
    assert created == 5
    refused(acme.put(f"{NS}/triggers/more", json=CRON), "triggers", 5)
    # every type counts toward the same limit
    http = {"type": "http", "function": "f"}
    refused(acme.put(f"{NS}/triggers/web", json=http), "triggers", 5)
    assert acme.get(f"{NS}/triggers").json()["total"] == 5
    # replacing one is no new one; deleting frees a place
    assert acme.put(f"{NS}/triggers/t0", json={**CRON, "enabled": False}).status_code == 200
    assert acme.delete(f"{NS}/triggers/t0").status_code == 200
    assert acme.put(f"{NS}/triggers/web", json=http).status_code == 201


def test_jobs_are_refused_past_the_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    a_function(acme)
    job = {"function": "f"}
    assert create_until_refused(lambda i: acme.put(f"{NS}/jobs/j{i}", json=job)) == 3
    refused(acme.put(f"{NS}/jobs/more", json=job), "jobs", 3)
    assert acme.get(f"{NS}/jobs").json()["total"] == 3
    assert acme.put(f"{NS}/jobs/j0", json={"function": "f", "run_id": 0}).status_code == 200


def test_secrets_are_refused_past_their_count_and_bytes(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    small = {"value": "x" * 10}
    assert create_until_refused(lambda i: acme.put(f"{NS}/secrets/s{i}", json=small)) == 4
    refused(acme.put(f"{NS}/secrets/more", json=small), "secrets", 4)
    assert acme.get(f"{NS}/secrets").json()["total"] == 4
    # bytes: 3 x 10 bytes used; growing one to 3000 bytes would need 3030
    error = refused(acme.put(f"{NS}/secrets/s0", json={"value": "y" * 3000}), "secret_bytes", 3000)
    assert error["details"]["requested"] == 3030
    assert acme.put(f"{NS}/secrets/s0", json={"value": "y" * 2970}).status_code == 200


def test_tokens_are_refused_past_the_limit(gateway: RunningGateway) -> None:
    gateway.tenant("acme")  # its first token is one of three
    mint = "/v1/admin/tenants/acme/tokens"
    assert gateway.admin.post(mint, json={}).status_code == 201
    assert gateway.admin.post(mint, json={}).status_code == 201
    refused(gateway.admin.post(mint, json={}), "tokens", 3)
    active = [t for t in gateway.admin.get(mint).json()["tokens"] if t["revoked_at"] is None]
    assert len(active) == 3
    assert gateway.admin.delete(f"{mint}/{active[0]['id']}").status_code == 200
    assert gateway.admin.post(mint, json={}).status_code == 201


def test_versions_are_kept_to_the_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    a_function(acme)
    for i in range(5):
        handler = f"def handle(event, context):\n    return {i}\n"
        response = acme.post(
            f"{NS}/functions/f/upload",
            content=make_zip({"handler.py": handler}),
            headers={"Content-Type": "application/zip"},
        )
        assert response.status_code == 202, response.text
    versions = acme.get(f"{NS}/functions/f/versions").json()["versions"]
    assert len(versions) == 2
    assert [v["version"] for v in versions] == ["v5", "v4"]


def test_concurrent_creates_never_exceed_the_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    a_function(acme)
    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(lambda i: acme.put(f"{NS}/triggers/c{i}", json=CRON), range(20)))
        secrets = list(
            pool.map(lambda i: acme.put(f"{NS}/secrets/c{i}", json={"value": "v"}), range(20))
        )
    assert sorted(r.status_code for r in answers) == [201] * 5 + [403] * 15
    assert sorted(r.status_code for r in secrets) == [201] * 4 + [403] * 16
    assert acme.get(f"{NS}/triggers").json()["total"] == 5
    assert acme.get(f"{NS}/secrets").json()["total"] == 4


def test_a_provider_set_limit_applies_to_that_tenant_only(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    beta = gateway.tenant("beta")
    a_function(acme)
    assert beta.put("/v1/namespaces/sless-beta/functions/f", json={}).status_code == 201
    answer = gateway.admin.put("/v1/admin/tenants/acme/limits", json={"max_triggers": 1})
    assert answer.status_code == 200, answer.text
    assert answer.json()["limits"]["triggers"]["limit"] == 1
    assert acme.put(f"{NS}/triggers/one", json=CRON).status_code == 201
    refused(acme.put(f"{NS}/triggers/two", json=CRON), "triggers", 1)
    for i in range(5):  # beta keeps the platform's limit
        cron = {**CRON, "function": "f"}
        assert beta.put(f"/v1/namespaces/sless-beta/triggers/t{i}", json=cron).status_code == 201
    # a tenant cannot set its own limits
    assert acme.put("/v1/admin/tenants/acme/limits", json={"max_triggers": 99}).status_code in (
        401,
        403,
    )
    # raised again: room for more at once
    assert gateway.admin.put("/v1/admin/tenants/acme/limits", json={}).status_code == 200
    assert acme.put(f"{NS}/triggers/two", json=CRON).status_code == 201
    bad = gateway.admin.put("/v1/admin/tenants/acme/limits", json={"max_triggers": -1})
    assert bad.status_code == 422


def test_limits_shows_every_limit_and_its_use(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    a_function(acme)
    assert acme.put(f"{NS}/triggers/t", json=CRON).status_code == 201
    assert acme.put(f"{NS}/secrets/s", json={"value": "abc"}).status_code == 201
    limits = acme.get("/v1/limits").json()["limits"]
    expected = {
        "functions", "memory_mb", "code_bytes", "max_instances", "versions", "triggers",
        "jobs", "secrets", "secret_bytes", "tokens", "queued_calls", "log_bytes",
        "idempotency_keys",
    }  # fmt: skip
    assert set(limits) == expected
    assert limits["triggers"] == {
        "limit": 5, "used": 1, "scope": "tenant", "when_reached": "refused"
    }  # fmt: skip
    assert limits["secrets"]["used"] == 1
    assert limits["secret_bytes"]["used"] == 3
    assert limits["functions"]["used"] == 1
    assert limits["tokens"] == {"limit": 3, "used": 1, "scope": "tenant", "when_reached": "refused"}
    assert limits["log_bytes"]["limit"] == 256 * 1024
    assert limits["log_bytes"]["when_reached"] == "oldest dropped"


SLOW = {
    "handler.py": "import time\n\ndef handle(event, context):\n    time.sleep(3)\n    return 1\n"
}
#: prints about 2 MiB in 1 KiB lines, numbered, the last one marked
CHATTY = {
    "handler.py": (
        "def handle(event, context):\n"
        "    for i in range(2048):\n"
        "        print(f'line {i:06d} ' + 'x' * 1000)\n"
        "    print('THE-LAST-LINE', flush=True)\n"
        "    return 'done'\n"
    )
}


def log_sizes(settings: Settings, namespace: str) -> dict[str, int]:
    directory = Path(settings.data_dir) / "logs" / namespace
    return {p.name: p.stat().st_size for p in directory.glob("*.log")}


def test_logs_stay_under_the_tenants_byte_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    for name in ("a", "b", "c"):
        assert deploy(acme, "sless-acme", name, CHATTY)["status"]["phase"] == "Ready"
    for name in ("a", "b", "c"):
        answer = httpx.get(f"{gateway.url}/fn/sless-acme/{name}", timeout=60)
        assert answer.status_code == 200, answer.text
    limit = gateway.settings.limits.max_log_bytes
    # 6 MiB were printed; on disk the tenant keeps at most its limit
    wait_for(
        "the logs trimmed", lambda: sum(log_sizes(gateway.settings, "sless-acme").values()) <= limit
    )
    sizes = log_sizes(gateway.settings, "sless-acme")
    assert set(sizes) == {"a.log", "b.log", "c.log"}
    assert sum(sizes.values()) <= limit
    # the newest lines are kept, the oldest dropped, and the tenant is told
    text = acme.get(f"{NS}/functions/a/logs").text
    assert "THE-LAST-LINE" in text
    assert "line 000000" not in text
    assert "earlier output dropped" in text
    assert acme.get("/v1/limits").json()["limits"]["log_bytes"]["used"] <= limit


#: writes 4 MiB as fast as it can, in 64 KiB writes
FLOOD = {
    "handler.py": (
        "import sys\n\n"
        "def handle(event, context):\n"
        "    chunk = (b'y' * 1023 + b'\\n') * 64\n"
        "    for _ in range(64):\n"
        "        sys.stdout.buffer.write(chunk)\n"
        "    sys.stdout.buffer.flush()\n"
        "    return 'flooded'\n"
    )
}


def test_a_log_flood_never_holds_more_than_the_limit_on_disk(gateway: RunningGateway) -> None:
    """Three functions write 12 MiB at once: the tenant's logs are bounded when written, so
    at no moment does the disk hold more than the limit (sampled while the flood runs)."""
    acme = gateway.tenant("acme")
    for name in ("a", "b", "c"):
        assert deploy(acme, "sless-acme", name, FLOOD)["status"]["phase"] == "Ready"
    limit = gateway.settings.limits.max_log_bytes
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    most = 0
    flooding = True

    def sample() -> None:
        # the bytes on disk between two writes (a sum of stats read while a write trims
        # one file and appends to another would add sizes of two different moments)
        nonlocal most
        while flooding:
            most = max(most, backend.log_bytes("sless-acme"))

    with ThreadPoolExecutor(4) as pool:
        sampler = pool.submit(sample)
        calls = [
            pool.submit(httpx.get, f"{gateway.url}/fn/sless-acme/{name}", timeout=120)
            for name in ("a", "b", "c")
        ]
        answers = [call.result() for call in calls]
        # the workers' output may still be on its way to the files after the answers
        # (gVisor's pipes): sample until the logs stop changing
        settled, last = 0, None
        while settled < 10:
            sizes = log_sizes(gateway.settings, "sless-acme")
            settled, last = (settled + 1 if sizes == last else 0), sizes
            time.sleep(0.1)
        flooding = False
        sampler.result()
    assert [answer.text for answer in answers] == ['"flooded"'] * 3, answers
    assert 0 < most <= limit, f"{most} bytes of logs on disk, the limit is {limit}"
    # the tenant is told lines were dropped: the file starts with the marker (the API's
    # tail may begin after it when more was written since the last trim)
    log_a = Path(gateway.settings.data_dir) / "logs" / "sless-acme" / "a.log"
    assert log_a.read_bytes().startswith(b"[earlier output dropped"), log_a.read_bytes()[:80]


def test_queued_calls_are_refused_past_the_limit(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    assert deploy(acme, "sless-acme", "slow", SLOW, {"timeout_s": 10})["status"]["phase"] == "Ready"
    queued = {"Prefer": "respond-async"}
    url = f"{gateway.url}/fn/sless-acme/slow"
    assert httpx.post(url, headers=queued, timeout=30).status_code == 202
    assert httpx.post(url, headers=queued, timeout=30).status_code == 202
    refused(httpx.post(url, headers=queued, timeout=30), "queued_calls", 2)
    assert acme.get("/v1/limits").json()["limits"]["queued_calls"]["used"] == 2


def test_the_tenant_resources_limits_win_and_bad_values_are_ignored() -> None:
    """Kubernetes mode: ``spec.limits`` of the Tenant resource (the CRD's schema comes
    from ``TenantLimits``) wins over the limits set through the admin API."""
    from sless.config import LimitsSettings
    from sless.crds import render_crd
    from sless.models import TenantSpec
    from sless.tenancy.quotas import with_overrides

    spec = TenantSpec.model_validate({"limits": {"max_triggers": 7}})
    assert spec.limits is not None
    merged = with_overrides(
        LimitsSettings(), {"max_triggers": 3, "max_jobs": 2}, spec.limits.overrides()
    )
    assert (merged.max_triggers, merged.max_jobs) == (7, 2)
    # a negative or unknown stored value never lowers or breaks anything
    assert with_overrides(LimitsSettings(), {"max_jobs": -1, "nope": 1}).max_jobs == 100
    schema = render_crd("Tenant")["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    fields = schema["properties"]["spec"]["properties"]["limits"]["properties"]
    assert fields["max_triggers"] == {"type": "integer", "minimum": 0, "nullable": True}

"""Attack: one tenant floods the management API to starve the others.

Its token bucket runs dry: 429 with ``Retry-After``; another tenant is unaffected."""

from __future__ import annotations

import pytest

from sless.config import Settings
from tests.conftest import RunningGateway

pytestmark = pytest.mark.integration

BURST = 5


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.limits.api_burst = BURST
    settings.limits.api_rate_per_s = 0.2
    return settings


def test_flooding_tenant_gets_429_and_the_other_tenant_does_not(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    beta = gateway.tenant("beta")
    statuses = [acme.get("/v1/namespaces/sless-acme/functions").status_code for _ in range(BURST)]
    assert statuses == [200] * BURST
    refused = acme.get("/v1/namespaces/sless-acme/functions")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "too_many_requests"
    retry_after = int(refused.headers["retry-after"])
    assert 1 <= retry_after <= 10
    assert acme.get("/v1/whoami").status_code == 429
    # the other tenant, and the provider, are not starved
    assert beta.get("/v1/namespaces/sless-beta/functions").status_code == 200
    assert gateway.admin.get("/v1/admin/tenants").status_code == 200

"""What the fuzzer found, kept as plain regression tests (each was a 500)."""

from __future__ import annotations

import pytest

from tests.conftest import RunningGateway

pytestmark = pytest.mark.integration


def test_a_row_id_past_postgresql_bigint_is_422_not_500(gateway: RunningGateway) -> None:
    gateway.tenant("acme")
    huge = "34630167361139253248"  # > 2**63 - 1: overflowed in PostgreSQL
    for method, path in [
        ("DELETE", f"/v1/admin/tenants/acme/tokens/{huge}"),
        ("POST", f"/v1/admin/reviews/{huge}/approve"),
    ]:
        response = gateway.admin.request(method, path, json={"reason": "r"})
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "invalid"
    missing = gateway.admin.delete(f"/v1/admin/tenants/acme/tokens/{2**63 - 1}")
    assert missing.status_code in (200, 404), missing.text

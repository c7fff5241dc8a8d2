"""Tenant quotas on functions, memory and stored code, through the real gateway.

A refusal is 403 ``quota_exceeded`` naming the quota, the use and the limit; an update
that does not grow passes; deleting frees room; concurrent creates never overshoot.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from sless.config import LimitsSettings
from sless.errors import QuotaExceeded
from sless.models import CodeRef, Function, FunctionSpec, FunctionStatus
from sless.tenancy.quotas import Usage, check_code, check_function, check_usage
from tests.conftest import RunningGateway
from tests.support import make_zip

pytestmark = pytest.mark.integration

FUNCTIONS = "/v1/namespaces/sless-acme/functions"


@pytest.fixture
def settings(settings: Any) -> Any:
    settings.limits.max_functions = 3
    settings.limits.max_memory_mb = 512
    settings.limits.max_code_bytes = 6000
    # these tests are about counting, not about what validation finds: semgrep stays off
    # to spare the shared CPU (the archive, entrypoint and text checks still run)
    settings.validation.static_enabled = False
    settings.validation.detonation_enabled = False  # the attack must run to be contained
    return settings


def put(client: httpx.Client, name: str, spec: dict[str, Any] | None = None) -> httpx.Response:
    return client.put(f"{FUNCTIONS}/{name}", json=spec or {})


def upload(client: httpx.Client, name: str, data: bytes) -> httpx.Response:
    return client.post(
        f"{FUNCTIONS}/{name}/upload", content=data, headers={"Content-Type": "application/zip"}
    )


def refusal(response: httpx.Response, quota: str) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert error["details"]["quota"] == quota
    assert quota in error["message"]
    return error


def sized_zip(size: int, text: str = "") -> bytes:
    """A valid handler zip of about ``size`` bytes (incompressible padding)."""
    handler = f"def handle(event, context):\n    return {text!r}\n"
    data = make_zip({"handler.py": handler, "pad.bin": os.urandom(max(0, size - 300))})
    return data


def function(name: str, spec: FunctionSpec) -> Function:
    return Function(name=name, namespace="sless-x", spec=spec, status=FunctionStatus())


def test_the_function_count_quota(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    for name in ("a", "b", "c"):
        assert put(acme, name).status_code == 201
    error = refusal(put(acme, "d"), "functions")
    assert error["details"] == {"quota": "functions", "used": 3, "requested": 4, "limit": 3}
    assert "limit is 3" in error["message"]
    assert "3 in use" in error["message"]
    # replacing an existing function is not a new one
    assert put(acme, "c", {"timeout_s": 5}).status_code == 200
    # deleting frees room at once
    assert acme.delete(f"{FUNCTIONS}/a").status_code == 200
    assert put(acme, "d").status_code == 201
    names = sorted(f["name"] for f in acme.get(FUNCTIONS).json()["functions"])
    assert names == ["b", "c", "d"]
    # the quota is per tenant: another tenant starts from zero
    beta = gateway.tenant("beta")
    for name in ("a", "b", "c"):
        response = beta.put(f"/v1/namespaces/sless-beta/functions/{name}", json={})
        assert response.status_code == 201, response.text


def test_the_memory_quota(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    assert put(acme, "big", {"memory_mb": 384}).status_code == 201
    error = refusal(put(acme, "more", {"memory_mb": 256}), "memory_mb")
    assert error["details"] == {"quota": "memory_mb", "used": 384, "requested": 640, "limit": 512}
    assert "640 MiB" in error["message"]
    assert put(acme, "more", {"memory_mb": 128}).status_code == 201
    # growing an existing function past the limit is refused, and changes nothing
    refusal(put(acme, "big", {"memory_mb": 512}), "memory_mb")
    assert acme.get(f"{FUNCTIONS}/big").json()["spec"]["memory_mb"] == 384
    # shrinking one makes room for growing the other
    assert put(acme, "big", {"memory_mb": 256}).status_code == 200
    assert put(acme, "more", {"memory_mb": 256}).status_code == 200


def test_an_update_that_does_not_grow_passes_above_a_lowered_limit(
    gateway: RunningGateway,
) -> None:
    acme = gateway.tenant("acme")
    assert put(acme, "f", {"memory_mb": 512}).status_code == 201
    gateway.settings.limits.max_memory_mb = 256  # the provider lowered the limit
    assert put(acme, "f", {"memory_mb": 512, "timeout_s": 5}).status_code == 200
    assert put(acme, "f", {"memory_mb": 384}).status_code == 200  # shrinking, still above
    refusal(put(acme, "f", {"memory_mb": 448}), "memory_mb")
    refusal(put(acme, "g", {"memory_mb": 32}), "memory_mb")


def test_the_stored_code_quota(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    assert put(acme, "a").status_code == 201
    assert put(acme, "b").status_code == 201
    first = sized_zip(4000, "a")
    response = upload(acme, "a", first)
    assert response.status_code == 202, response.text
    error = refusal(upload(acme, "b", sized_zip(3000, "b")), "code_bytes")
    assert error["details"]["used"] == len(first)
    assert error["details"]["limit"] == 6000
    assert "bytes" in error["message"]
    # nothing changed for b: no code, no report stored as if it had been accepted
    assert acme.get(f"{FUNCTIONS}/b").json()["spec"]["code"] is None
    # replacing a's code counts a's new size instead of its old one
    assert upload(acme, "a", sized_zip(1500, "a2")).status_code == 202
    assert upload(acme, "b", sized_zip(3000, "b")).status_code == 202
    sizes = {f["name"]: f["spec"]["code"]["size"] for f in acme.get(FUNCTIONS).json()["functions"]}
    assert sum(sizes.values()) <= 6000
    # deleting a frees its code's room
    assert acme.delete(f"{FUNCTIONS}/a").status_code == 200
    assert put(acme, "c").status_code == 201
    assert upload(acme, "c", sized_zip(2500, "c")).status_code == 202


def test_concurrent_creates_never_overshoot(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    with ThreadPoolExecutor(max_workers=10) as pool:
        responses = list(pool.map(lambda i: put(acme, f"f{i}"), range(10)))
    codes = sorted(r.status_code for r in responses)
    assert codes == [201, 201, 201] + [403] * 7, [r.text for r in responses]
    assert acme.get(FUNCTIONS).json()["count"] == 3


def test_the_quota_check_is_pure_and_names_what_grows() -> None:
    limits = LimitsSettings(max_functions=2, max_memory_mb=256, max_code_bytes=100)
    spec = FunctionSpec(memory_mb=128, code=CodeRef(sha256="0" * 64, blob_key="k", size=60))
    before = Usage.of([spec])
    assert before == Usage(functions=1, memory_mb=128, code_bytes=60)
    check_usage(before, Usage.of([spec, spec]), limits.model_copy(update={"max_code_bytes": 120}))
    with pytest.raises(QuotaExceeded) as raised:
        check_usage(before, Usage.of([spec, spec]), limits)
    assert raised.value.details["quota"] == "code_bytes"
    assert raised.value.status == 403
    # above the limit already, but not growing: allowed
    check_usage(Usage(3, 512, 500), Usage(3, 256, 500), limits)
    current = [function("f", spec)]
    tight = limits.model_copy(update={"max_memory_mb": 128})
    check_function(tight, current, "f", FunctionSpec(memory_mb=128))  # code kept, same size
    with pytest.raises(QuotaExceeded):
        check_function(tight, current, "g", FunctionSpec(memory_mb=32))
    check_code(limits, current, "f", 100)  # replaces f's 60 bytes
    # g has no code yet: 60 + 50 bytes grows past 100
    with_g = [*current, function("g", FunctionSpec())]
    with pytest.raises(QuotaExceeded):
        check_code(limits, with_g, "g", 50)

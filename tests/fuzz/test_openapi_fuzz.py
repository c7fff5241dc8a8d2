"""A short fuzz run of the whole HTTP API (a few hundred cases, every operation): no 5xx,
no undeclared status, no answer off its schema, and the platform healthy afterwards."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.faults.harness import ADMIN, platform_on
from tests.fuzz.fuzzing import ENV, fuzz

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_fuzzing_the_api_as_a_tenant_and_as_the_admin(fault_dir: Path) -> None:
    with platform_on(fault_dir / "data", ENV) as platform:
        acme = platform.tenant("acme")
        acme.deploy("hello")
        runs = [
            fuzz(platform.url, "tenant", acme.token, 3, fault_dir),
            fuzz(platform.url, "admin", ADMIN, 3, fault_dir),
        ]
        for run in runs:
            assert run.cases > 0, run.output[-3000:]
            assert run.returncode == 0, f"{run.who}: {run.failures} failures\n{run.output[-6000:]}"
        # healthy afterwards: ready, and the tenant's function still answers
        assert httpx.get(f"{platform.url}/readyz").status_code == 200
        answer = httpx.post(f"{platform.url}/fn/{acme.namespace}/hello", timeout=60)
        assert answer.status_code == 200, answer.text

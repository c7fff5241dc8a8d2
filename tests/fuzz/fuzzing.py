"""schemathesis against a running platform's /openapi.json, as a tenant and as the admin.

The checks: no 5xx (``not_a_server_error``), every status code declared
(``status_code_conformance``), and every answer of the declared content type and schema.
The short run is a test (``test_openapi_fuzz.py``); ``bench/fuzz.py`` runs it long.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
    ]
)
#: what a fuzzed platform must not limit: the fuzzer sends far more than a tenant's rate
ENV = {
    "SLESS_LIMITS_API_RATE_PER_S": "100000",
    "SLESS_LIMITS_API_BURST": "100000",
    "SLESS_LIMITS_FAILED_AUTH_PER_MINUTE": "100000",
}


@dataclass
class FuzzRun:
    who: str
    returncode: int
    cases: int
    failures: int
    output: str


def _schemathesis() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if found is None:
        raise AssertionError("schemathesis is not installed (a dev dependency: uv sync)")
    return found


def fuzz(url: str, who: str, token: str, max_examples: int, work: Path) -> FuzzRun:
    result = subprocess.run(
        [
            _schemathesis(),
            "run",
            f"{url}/openapi.json",
            "--header",
            f"Authorization: Bearer {token}",
            "--max-examples",
            str(max_examples),
            "--checks",
            CHECKS,
            "--phases",
            "examples,coverage,fuzzing",
            "--workers",
            "1",
            "--request-timeout",
            "60",
            "--no-color",
            "--seed",
            "1",
            "--report",
            "ndjson",
            "--report-dir",
            str(work / who),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
        # the hypothesis example database stays out of the repository
        cwd=work,
    )
    output = result.stdout + result.stderr
    generated = re.search(r"(\d+) generated", output)
    failures = re.search(r"(\d+) found (\d+) unique failures", output)
    return FuzzRun(
        who,
        result.returncode,
        int(generated.group(1)) if generated else 0,
        int(failures.group(2)) if failures else 0,
        output,
    )

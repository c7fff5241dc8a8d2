"""Versions and the traffic split through the real gateway in Kubernetes mode.

Real PostgreSQL (versions, invocation history), a real S3 API, the real kube-apiserver
(Function resources, EndpointSlices) and two real runtime servers, one per version. The
test plays the operator (it reports both versions serving, as ``test_operator`` shows it
does) and the node (each version's runtime server is in the EndpointSlice of its Service:
``fn-<name>`` for the current version, ``fn-<name>-v1`` for the other one).
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client

from tests.kube.test_backend_helpers import GROUP, VERSION, endpoint_slice, pod_host
from tests.kube.test_gateway_kubernetes import (
    RUNTIME,
    Onboarded,
    function_crd,
    kube_api,
    kube_gateway,
    kube_tenant,
    s3_bucket,
)
from tests.support import make_zip, wait_for

# fixtures used here
__all__ = ["function_crd", "kube_api", "kube_gateway", "kube_tenant", "s3_bucket"]

pytestmark = pytest.mark.kube


def code(marker: str) -> dict[str, str | bytes]:
    return {"handler.py": f"def handle(event, context):\n    return {{'code': {marker!r}}}\n"}


@contextmanager
def runtime(tmp_path: Path, marker: str) -> Iterator[tuple[str, int]]:
    """The Python runtime server serving ``code(marker)`` inside the test host's namespace."""
    directory = tmp_path / marker
    directory.mkdir()
    with zipfile.ZipFile(io.BytesIO(make_zip(code(marker)))) as archive:
        archive.extractall(directory)
    host = pod_host()
    with host.listen() as probe:
        port = probe.getsockname()[1]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PORT": str(port),
        "SLESS_CODE_DIR": str(directory),
        "SLESS_FUNCTION": "app",
        "SLESS_CONCURRENCY": "2",
    }
    log_path = tmp_path / f"{marker}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            host.command(sys.executable, str(RUNTIME)),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

        def listening() -> bool:
            if proc.poll() is not None:
                raise AssertionError(log_path.read_text())
            with socket.socket() as s:
                return s.connect_ex((host.address, port)) == 0

        try:
            wait_for(f"runtime {marker} to listen", listening, timeout=30)
            yield host.address, port
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_a_traffic_split_and_name_at_version_in_kubernetes_mode(
    kube_gateway: str, kube_api: client.ApiClient, tmp_path: Path, kube_tenant: Onboarded
) -> None:
    namespace, acme = kube_tenant.namespace, kube_tenant.client
    custom = client.CustomObjectsApi(kube_api)
    discovery = client.DiscoveryV1Api(kube_api)
    path = f"/v1/namespaces/{namespace}/functions/app"
    url = f"{kube_gateway}/fn/{namespace}/app"

    def resource() -> dict[str, Any]:
        got: dict[str, Any] = custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "functions", "app"
        )
        return got

    def serve(status: dict[str, Any]) -> None:
        """The operator's part: what it reports once the Deployments are applied."""
        custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, namespace, "functions", "app", {"status": status}
        )

    def upload(marker: str, **params: Any) -> dict[str, Any]:
        response = acme.post(
            path + "/upload",
            content=make_zip(code(marker)),
            headers={"Content-Type": "application/zip"},
            params=params,
        )
        assert response.status_code == 202, response.text
        body: dict[str, Any] = response.json()
        return body

    assert acme.put(path, json={"env": {"COLOR": "blue"}}).status_code == 201
    assert upload("one")["version"] == "v1"
    spec_one = {k: v for k, v in resource()["spec"].items() if k != "revisions"}
    serve({"phase": "Ready", "servingSpec": spec_one, "message": ""})
    assert upload("two", traffic=25)["version"] == "v2"

    # what the gateway wrote: v2 is current, 25 %; v1 keeps 75 % and its own spec
    written = resource()["spec"]
    assert written["code"]["version"] == "v2"
    assert written["traffic"] == [
        {"version": "v1", "percent": 75},
        {"version": "v2", "percent": 25},
    ]
    assert list(written["revisions"]) == ["v1"]
    assert written["revisions"]["v1"]["code"] == spec_one["code"]
    assert written["revisions"]["v1"]["env"] == {"COLOR": "blue"}

    spec_two = {k: v for k, v in written.items() if k != "revisions"}
    serve(
        {
            "phase": "Ready",
            "servingSpec": spec_two,
            "servingRevisions": {"v1": written["revisions"]["v1"]},
        }
    )
    status = acme.get(path).json()
    assert status["version"] == "v2"
    assert status["status"]["version"] == "v2"

    with runtime(tmp_path, "one") as one, runtime(tmp_path, "two") as two:
        # the node's part: each version's pods behind its own Service
        discovery.create_namespaced_endpoint_slice(
            namespace, endpoint_slice("fn-app-x", "fn-app", [(two[0], True)], two[1])
        )
        discovery.create_namespaced_endpoint_slice(
            namespace, endpoint_slice("fn-app-v1-x", "fn-app-v1", [(one[0], True)], one[1])
        )
        for version, marker in (("v1", "one"), ("v2", "two")):
            wait_for(
                f"{version} to answer",
                lambda v=version, m=marker: (
                    (r := httpx.get(f"{url}@{v}", timeout=30)).status_code == 200
                    and r.json()["code"] == m
                ),
            )
        seen = Counter(httpx.get(url, timeout=30).json()["code"] for _ in range(60))
        # 60 draws at 75/25: both reached (missing one has a chance below 1e-7)
        assert seen["one"] > 0, seen
        assert seen["two"] > 0, seen
        assert seen["one"] + seen["two"] == 60

        rows = wait_for(
            "the invocations to be recorded",
            lambda: (
                rows
                if len(
                    rows := acme.get(
                        f"/v1/namespaces/{namespace}/invocations",
                        params={"function": "app", "limit": 1000},
                    ).json()["invocations"]
                )
                >= 62
                else None
            ),
        )
        assert {r["version"] for r in rows} == {"v1", "v2"}

        # not a traffic target: not reachable by name, with a clear answer
        missing = httpx.get(f"{url}@v7", timeout=30)
        assert missing.status_code == 404
        assert "not serving" in missing.json()["error"]["message"]

        # rollback to v1: the spec is v1's again, no split, no revisions
        rolled = acme.post(path + "/rollback", json={"version": "v1"})
        assert rolled.status_code == 200, rolled.text
        back = resource()["spec"]
        assert back["code"] == spec_one["code"]
        assert back["traffic"] == []
        assert back["revisions"] == {}
        assert [v["version"] for v in acme.get(path + "/versions").json()["versions"]] == [
            "v2",
            "v1",
        ]

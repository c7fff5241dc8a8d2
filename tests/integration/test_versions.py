"""Versions, rollback and the traffic split, embedded mode: real PostgreSQL, real workers.

Every upload is a version; ``rollback`` serves an old one again without a rebuild; a
traffic split reaches both versions (each with its own warm pool), ``name@vN`` calls one
version directly, and each invocation record names the version that answered. Old
versions are pruned to ``limits.max_versions`` and their blobs deleted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import make_zip, wait_phase

pytestmark = pytest.mark.integration

SLESS = str(Path(sys.executable).parent / "sless")
NS = "sless-acme"
FN = f"/v1/namespaces/{NS}/functions"


def code(marker: str) -> dict[str, str | bytes]:
    return {
        "handler.py": (
            "import os\n"
            "def handle(event, context):\n"
            f"    return {{'code': {marker!r}, 'env': os.environ.get('COLOR', '')}}\n"
        )
    }


def upload(client: httpx.Client, name: str, marker: str, **params: Any) -> dict[str, Any]:
    response = client.post(
        f"{FN}/{name}/upload",
        content=make_zip(code(marker)),
        headers={"Content-Type": "application/zip"},
        params=params,
    )
    assert response.status_code == 202, response.text
    body: dict[str, Any] = response.json()
    return body


def wait_answer(url: str, marker: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        response = httpx.get(url, timeout=30)
        if response.status_code == 200 and response.json()["code"] == marker:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} never answered {marker}: {response.text}")
        time.sleep(0.2)


def versions(client: httpx.Client, name: str) -> list[dict[str, Any]]:
    response = client.get(f"{FN}/{name}/versions")
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["versions"]
    return items


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def test_uploads_are_versions_and_rollback_serves_an_old_one_without_a_rebuild(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert acme.put(f"{FN}/hello", json={}).status_code == 201
    first = upload(acme, "hello", "one")
    assert first["version"] == "v1"
    wait_phase(acme, f"{FN}/hello", {"Ready"})
    url = f"{gateway.url}/fn/{NS}/hello"
    wait_answer(url, "one")
    second = upload(acme, "hello", "two")
    assert second["version"] == "v2"
    wait_phase(acme, f"{FN}/hello", {"Ready"})
    wait_answer(url, "two")

    listed = versions(acme, "hello")
    assert [v["version"] for v in listed] == ["v2", "v1"]
    assert [v["sha256"] for v in listed] == [second["sha256"], first["sha256"]]
    for item in listed:
        assert item["state"] == "allowed"
        assert item["validation"]["verdict"] == "allow"
        assert item["created_by"].startswith("tenant acme (token ")
        assert item["created_at"]
        assert item["spec"]["code"]["version"] == item["version"]
    assert [v["current"] for v in listed] == [True, False]
    # paging: one per page, the cursor leads to the older one
    page = acme.get(f"{FN}/hello/versions", params={"limit": 1}).json()
    assert [v["version"] for v in page["versions"]] == ["v2"]
    rest = acme.get(f"{FN}/hello/versions", params={"limit": 1, "cursor": page["next_cursor"]})
    assert [v["version"] for v in rest.json()["versions"]] == ["v1"]

    build = gateway.settings.data_dir / "builds" / f"python3.11-{first['sha256']}"
    built_at = (build / ".complete").stat().st_mtime_ns
    # an If-Match of another state is refused; the current ETag passes
    stale = acme.post(f"{FN}/hello/rollback", json={"version": "v1"}, headers={"If-Match": '"1"'})
    assert stale.status_code == 412, stale.text
    etag = acme.get(f"{FN}/hello").headers["etag"]
    rolled = acme.post(f"{FN}/hello/rollback", json={"version": "v1"}, headers={"If-Match": etag})
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["version"] == "v1"
    assert rolled.headers["etag"] != etag
    wait_phase(acme, f"{FN}/hello", {"Ready"})
    wait_answer(url, "one")
    # the build of v1's code was not made again
    assert (build / ".complete").stat().st_mtime_ns == built_at
    # a rollback makes no version; the next upload is v3
    assert [v["version"] for v in versions(acme, "hello")] == ["v2", "v1"]
    assert upload(acme, "hello", "three")["version"] == "v3"

    for body, expected in (
        ({"version": "v9"}, "has no version v9"),
        ({"version": "3"}, "version"),
        ({"version": "v1", "extra": 1}, "extra"),
    ):
        refused = acme.post(f"{FN}/hello/rollback", json=body)
        assert refused.status_code == 422, refused.text
        assert expected in refused.text
    entries = acme.get(f"/v1/namespaces/{NS}/audit").json()["entries"]
    rollbacks = [e for e in entries if e["action"] == "function.rollback"]
    assert [e["outcome"] for e in rollbacks].count("ok") == 1
    assert any(e["detail"] == "version: v1" for e in rollbacks), rollbacks


def test_a_traffic_split_reaches_both_versions_and_name_at_version_calls_one(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert acme.put(f"{FN}/split", json={"env": {"COLOR": "blue"}}).status_code == 201
    upload(acme, "split", "old")
    wait_phase(acme, f"{FN}/split", {"Ready"})
    url = f"{gateway.url}/fn/{NS}/split"
    wait_answer(url, "old")
    canary = upload(acme, "split", "new", traffic=50)
    assert canary["version"] == "v2"
    function = wait_phase(acme, f"{FN}/split", {"Ready"})
    assert function["spec"]["traffic"] == [
        {"version": "v1", "percent": 50},
        {"version": "v2", "percent": 50},
    ]
    wait_answer(f"{url}@v2", "new")
    wait_answer(f"{url}@v1", "old")
    # each version has its own warm pool, its own workers; the prestart pool still serves
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    current, other = backend.pool(NS, "split"), backend.version_pool(NS, "split", "v1")
    assert current.spec.version == "v2"
    assert other.spec.version == "v1"
    assert current.worker_pids()
    assert other.worker_pids()
    assert current.worker_pids().isdisjoint(other.worker_pids())
    assert backend.prestart is not None
    assert backend.prestart.handed_out >= 1
    seen = Counter(httpx.get(url, timeout=30).json()["code"] for _ in range(60))
    # 60 draws at 50 %: both are reached (the chance of missing one is 2 * 2**-60)
    assert seen["old"] > 0, seen
    assert seen["new"] > 0, seen
    assert seen["old"] + seen["new"] == 60

    # the invocation records carry the version that answered
    deadline = time.monotonic() + 30
    while True:
        rows = acme.get(
            f"/v1/namespaces/{NS}/invocations", params={"function": "split", "limit": 1000}
        ).json()["invocations"]
        by_version = Counter(r["version"] for r in rows if r["status"] == 200)
        if sum(by_version.values()) >= 62 or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert set(by_version) == {"v1", "v2"}, by_version

    # a queued call is drawn by the split too, and its record names the version; a queued
    # call of name@version runs that version, every time (the queue keeps the version)
    def queued_version(target: str) -> str:
        queued = httpx.post(target, headers={"X-Sless-Async": "true"}, timeout=30)
        assert queued.status_code == 202, queued.text
        call = queued.json()["invocation_id"]
        deadline = time.monotonic() + 60
        while True:
            row = acme.get(f"/v1/namespaces/{NS}/invocations/{call}")
            if row.status_code == 200 and row.json().get("version"):
                assert row.json()["status"] == 200, row.json()
                return str(row.json()["version"])
            assert time.monotonic() < deadline, row.text
            time.sleep(0.3)

    assert queued_version(url) in ("v1", "v2")
    assert {queued_version(f"{url}@v1") for _ in range(6)} == {"v1"}
    assert queued_version(f"{url}@v2") == "v2"

    # a version that is not routed is not reachable; a bad version name is not found
    spec = {key: v for key, v in function["spec"].items() if key != "code"}
    assert acme.put(f"{FN}/split", json={**spec, "traffic": []}).status_code == 200
    wait_phase(acme, f"{FN}/split", {"Ready"})
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}@v1", timeout=30).status_code != 404:
        assert time.monotonic() < deadline, "v1 still served after the split was removed"
        time.sleep(0.2)
    assert "not serving" in httpx.get(f"{url}@v1", timeout=30).text
    # both traffic changes are in the audit log, with the shares
    entries = acme.get(f"/v1/namespaces/{NS}/audit").json()["entries"]
    details = {(e["action"], e["detail"]) for e in entries if e["target_name"] == "split"}
    assert ("function.upload", "traffic: 50% to the new version") in details
    assert ("function.put", "traffic: all to the current version") in details
    assert httpx.get(f"{url}@latest", timeout=30).status_code == 404
    assert httpx.get(f"{url}@v2", timeout=30).json()["code"] == "new"

    for traffic, expected in (
        ([{"version": "v1", "percent": 60}, {"version": "v2", "percent": 30}], "add up to 90"),
        ([{"version": "v7", "percent": 100}], "has no version v7"),
        ([{"version": f"v{i}", "percent": 20} for i in range(1, 6)], "at most 4"),
        ([{"version": "v1", "percent": 50}, {"version": "v1", "percent": 50}], "named once"),
    ):
        refused = acme.put(f"{FN}/split", json={**spec, "traffic": traffic})
        assert refused.status_code == 422, refused.text
        assert expected in refused.text, refused.text


def test_a_spec_change_is_a_new_version_and_a_traffic_change_is_not(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert acme.put(f"{FN}/cfg", json={"env": {"COLOR": "red"}}).status_code == 201
    upload(acme, "cfg", "same")
    wait_phase(acme, f"{FN}/cfg", {"Ready"})
    changed = acme.put(f"{FN}/cfg", json={"env": {"COLOR": "green"}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["version"] == "v2"
    wait_phase(acme, f"{FN}/cfg", {"Ready"})
    listed = versions(acme, "cfg")
    assert [v["version"] for v in listed] == ["v2", "v1"]
    assert listed[0]["sha256"] == listed[1]["sha256"]
    assert [v["spec"]["env"]["COLOR"] for v in listed] == ["green", "red"]
    url = f"{gateway.url}/fn/{NS}/cfg"
    deadline = time.monotonic() + 60
    while httpx.get(url, timeout=30).json()["env"] != "green":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # the same spec again, then only a traffic split: no new version
    again = acme.put(f"{FN}/cfg", json={"env": {"COLOR": "green"}})
    assert again.json()["version"] == "v2"
    split = [{"version": "v1", "percent": 10}, {"version": "v2", "percent": 90}]
    routed = acme.put(f"{FN}/cfg", json={"env": {"COLOR": "green"}, "traffic": split})
    assert routed.status_code == 200, routed.text
    assert routed.json()["version"] == "v2"
    assert [v["version"] for v in versions(acme, "cfg")] == ["v2", "v1"]
    wait_phase(acme, f"{FN}/cfg", {"Ready"})
    # v1 serves with its own spec (red), v2 with green
    wait_answer(f"{url}@v1", "same")
    assert httpx.get(f"{url}@v1", timeout=30).json()["env"] == "red"
    assert httpx.get(f"{url}@v2", timeout=30).json()["env"] == "green"


def test_old_versions_are_pruned_to_the_limit_and_their_blobs_deleted(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    gateway.settings.limits.max_versions = 2
    blobs = gateway.settings.data_dir / "blobs"
    builds = gateway.settings.data_dir / "builds"
    assert acme.put(f"{FN}/gc", json={}).status_code == 201
    a = upload(acme, "gc", "a")["sha256"]
    wait_phase(acme, f"{FN}/gc", {"Ready"})
    b = upload(acme, "gc", "b")["sha256"]
    wait_phase(acme, f"{FN}/gc", {"Ready"})
    assert (blobs / f"{a}.zip").exists()
    assert (blobs / f"{b}.zip").exists()
    # a traffic target is kept beyond the limit: v3 (a spec change) makes three
    split = [{"version": "v1", "percent": 50}, {"version": "v2", "percent": 50}]
    assert acme.put(f"{FN}/gc", json={"traffic": split}).status_code == 200
    changed = acme.put(f"{FN}/gc", json={"env": {"COLOR": "x"}, "traffic": split})
    assert changed.json()["version"] == "v3"
    assert [v["version"] for v in versions(acme, "gc")] == ["v3", "v2", "v1"]
    wait_phase(acme, f"{FN}/gc", {"Ready"})
    # a new upload takes all the traffic: v1 and v2 go; v2's code is v3's too and stays
    c = upload(acme, "gc", "c")["sha256"]
    wait_phase(acme, f"{FN}/gc", {"Ready"})
    assert [v["version"] for v in versions(acme, "gc")] == ["v4", "v3"]
    assert not (blobs / f"{a}.zip").exists()
    assert not (builds / f"python3.11-{a}").exists()
    assert (blobs / f"{b}.zip").exists()
    assert (blobs / f"{c}.zip").exists()
    # deleting the function deletes its versions and their blobs
    assert acme.delete(f"{FN}/gc").status_code == 200
    assert not any((blobs / f"{sha}.zip").exists() for sha in (a, b, c))


def test_the_cli_deploys_a_canary_lists_versions_splits_and_rolls_back(
    gateway: RunningGateway, tmp_path: Path
) -> None:
    created = gateway.admin.post("/v1/admin/tenants", json={"name": "acme"})
    token = created.json()["token"]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}

    def sless(*args: str) -> subprocess.CompletedProcess[str]:
        command = [SLESS, *args, "--url", gateway.url, "--token", token]
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=300, check=False
        )

    directory = tmp_path / "code"
    directory.mkdir()
    url = f"{gateway.url}/fn/{NS}/app"
    for marker, extra in (("one", []), ("two", ["--traffic", "10"])):
        (directory / "handler.py").write_text(str(code(marker)["handler.py"]))
        result = sless("deploy", str(directory), "--name", "app", *extra)
        assert result.returncode == 0, result.stdout + result.stderr
    assert "traffic: v1 90%, v2 10%" in result.stdout
    listed = sless("versions", "app")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["VERSION", "TRAFFIC", "SHA256"]
    assert lines[1].split()[:2] == ["v2*", "10%"]
    assert lines[2].split()[:2] == ["v1", "90%"]
    assert "tenant acme" in lines[1]
    wait_answer(f"{url}@v2", "two")
    # promote the canary, then go back to v1
    promoted = sless("traffic", "app", "v2=100")
    assert promoted.returncode == 0, promoted.stderr
    assert "no split" in promoted.stdout
    wait_answer(url, "two")
    rolled = sless("rollback", "app", "v1")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    assert "app is Ready" in rolled.stdout
    wait_answer(url, "one")
    bad = sless("rollback", "app", "v9")
    assert bad.returncode != 0
    assert "has no version v9" in bad.stderr
    bad = sless("traffic", "app", "v1=50", "v2=40")
    assert bad.returncode != 0
    assert "add up to 90" in bad.stderr


def test_versions_keep_the_functions_auth_and_tenancy(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    token = acme.headers["Authorization"]
    assert acme.put(f"{FN}/private", json={"auth": "token"}).status_code == 201
    upload(acme, "private", "first")
    wait_phase(acme, f"{FN}/private", {"Ready"})
    upload(acme, "private", "second", traffic=0)
    wait_phase(acme, f"{FN}/private", {"Ready"})
    url = f"{gateway.url}/fn/{NS}/private"
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}@v1", headers={"Authorization": token}).status_code != 200:
        assert time.monotonic() < deadline, "v1 never served"
        time.sleep(0.2)
    # @version takes the function's auth: no token, another tenant's token
    assert httpx.get(f"{url}@v1").status_code == 401
    globex = gateway.tenant("globex")
    assert (
        httpx.get(
            f"{url}@v1", headers={"Authorization": globex.headers["Authorization"]}
        ).status_code
        == 404
    )
    assert httpx.get(f"{url}@v1", headers={"Authorization": token}).json()["code"] == "first"
    # 0 %: never drawn, every call goes to v1
    assert {httpx.get(url, headers={"Authorization": token}).json()["code"] for _ in range(20)} == {
        "first"
    }
    # another tenant sees none of it
    assert globex.get(f"{FN}/private/versions").status_code == 404
    refused = globex.post(f"{FN}/private/rollback", json={"version": "v1"})
    assert refused.status_code == 404
    assert [v["version"] for v in versions(acme, "private")] == ["v2", "v1"]

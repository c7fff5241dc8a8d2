"""The audit log through the real gateway and PostgreSQL: one row per management action,
with who, what, target and outcome; nothing secret in it; each tenant reads only its own
log, the provider reads all of it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import httpx
import pytest

from sless.config import Settings
from tests.conftest import ADMIN_TOKEN, RunningGateway
from tests.integration.validation.fake_llm import FakeLLM, verdict
from tests.support import make_zip

pytestmark = pytest.mark.integration

HELLO = {"handler.py": "def handle(event, context):\n    return 'hi'\n"}
SECRET_VALUE = "amqp://user:S3cr3t-Value-9f2c@broker:5672/"
HEADER_SECRET = "header-secret-4b1d"
QUERY_SECRET = "query-secret-77aa"
MUTATING = {"PUT", "POST", "DELETE", "PATCH"}


def _admin_rows(gateway: RunningGateway, **params: Any) -> list[dict[str, Any]]:
    response = gateway.admin.get("/v1/admin/audit", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["entries"]
    return rows


def _last_id(gateway: RunningGateway) -> int:
    rows = _admin_rows(gateway, limit=1)
    return int(rows[0]["id"]) if rows else 0


def token_of(client: httpx.Client) -> str:
    return str(client.headers["authorization"]).removeprefix("Bearer ")


def _tenant_rows(client: httpx.Client, ns: str, **params: Any) -> list[dict[str, Any]]:
    response = client.get(f"/v1/namespaces/{ns}/audit", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["entries"]
    return rows


@dataclass
class Step:
    client: httpx.Client
    method: str
    path: str
    status: int
    action: str
    outcome: str
    target: tuple[str | None, str | None]
    kwargs: dict[str, Any] | None = None
    #: a request that matches no route is never authenticated: its actor is unknown
    authenticated: bool = True


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


@pytest.fixture
def rival(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("rival")


def test_every_mutating_route_writes_exactly_one_row(
    gateway: RunningGateway, acme: httpx.Client, rival: httpx.Client, database_url: str
) -> None:
    anonymous = httpx.Client(base_url=gateway.url, timeout=60)
    gateway.clients.append(anonymous)
    admin = gateway.admin
    ns = "/v1/namespaces/sless-acme"
    fn = f"{ns}/functions"
    acme_target = "sless-acme"
    steps = [
        Step(
            acme,
            "PUT",
            f"{ns}/secrets/db",
            201,
            "secret.put",
            "ok",
            (acme_target, "db"),
            {
                "json": {"value": SECRET_VALUE},
                "headers": {"X-Api-Key": HEADER_SECRET},
                "params": {"q": QUERY_SECRET},
            },
        ),
        Step(
            acme,
            "PUT",
            f"{fn}/hello",
            201,
            "function.put",
            "ok",
            (acme_target, "hello"),
            {"json": {}},
        ),
        Step(
            acme,
            "PUT",
            f"{fn}/hello",
            200,
            "function.put",
            "ok",
            (acme_target, "hello"),
            {"json": {"memory_mb": 128}},
        ),
        Step(
            acme,
            "PUT",
            f"{fn}/Bad_Name",
            422,
            "function.put",
            "invalid",
            (acme_target, "Bad_Name"),
            {"json": {}},
        ),
        Step(
            acme,
            "PUT",
            f"{fn}/hello",
            422,
            "function.put",
            "invalid",
            (acme_target, "hello"),
            {"json": {"env": {"K": SECRET_VALUE}, "runtime": "cobol"}},
        ),
        Step(
            acme,
            "POST",
            f"{fn}/hello/upload",
            202,
            "function.upload",
            "ok",
            (acme_target, "hello"),
            {"content": make_zip(HELLO)},
        ),
        Step(
            acme,
            "POST",
            f"{fn}/hello/rollback",
            200,
            "function.rollback",
            "ok",
            (acme_target, "hello"),
            {"json": {"version": "v1"}},
        ),
        Step(
            acme,
            "POST",
            f"{fn}/hello/rollback",
            422,
            "function.rollback",
            "invalid",
            (acme_target, "hello"),
            {"json": {"version": "v7"}},
        ),
        Step(
            acme,
            "POST",
            f"{fn}/ghost/upload",
            404,
            "function.upload",
            "not_found",
            (acme_target, "ghost"),
            {"content": make_zip(HELLO)},
        ),
        Step(
            acme,
            "PUT",
            f"{ns}/triggers/web",
            201,
            "trigger.put",
            "ok",
            (acme_target, "web"),
            {"json": {"type": "http", "function": "hello"}},
        ),
        Step(
            acme, "DELETE", f"{ns}/triggers/web", 200, "trigger.delete", "ok", (acme_target, "web")
        ),
        Step(
            acme,
            "PUT",
            f"{ns}/jobs/once",
            201,
            "job.put",
            "ok",
            (acme_target, "once"),
            {"json": {"function": "hello", "run_id": 0}},
        ),
        Step(acme, "DELETE", f"{ns}/jobs/once", 200, "job.delete", "ok", (acme_target, "once")),
        Step(acme, "DELETE", f"{ns}/secrets/db", 200, "secret.delete", "ok", (acme_target, "db")),
        Step(acme, "DELETE", f"{fn}/hello", 200, "function.delete", "ok", (acme_target, "hello")),
        Step(
            acme,
            "DELETE",
            f"{fn}/hello",
            404,
            "function.delete",
            "not_found",
            (acme_target, "hello"),
        ),
        # another tenant's namespace: recorded in the actor's log, answered like a missing one
        Step(
            acme,
            "PUT",
            "/v1/namespaces/sless-rival/functions/x",
            404,
            "function.put",
            "not_found",
            ("sless-rival", "x"),
            {"json": {}},
        ),
        # no route, and a route without this method: not authenticated, so no actor known
        Step(
            acme,
            "POST",
            f"{ns}/nothing-here",
            404,
            "unknown",
            "not_found",
            (None, None),
            authenticated=False,
        ),
        Step(acme, "POST", fn, 405, "unknown", "invalid", (acme_target, None), authenticated=False),
        Step(
            anonymous,
            "PUT",
            f"{fn}/anon",
            401,
            "function.put",
            "denied",
            (acme_target, "anon"),
            {"json": {}},
        ),
        # refused before the handler runs: no target named
        Step(
            acme,
            "POST",
            "/v1/admin/tenants",
            401,
            "tenant.create",
            "denied",
            (None, None),
            {"json": {"name": "sneaky"}},
        ),
        Step(
            admin,
            "POST",
            "/v1/admin/tenants",
            201,
            "tenant.create",
            "ok",
            ("sless-newco", "newco"),
            {"json": {"name": "newco"}},
        ),
        Step(
            admin,
            "POST",
            "/v1/admin/tenants",
            409,
            "tenant.create",
            "conflict",
            ("sless-newco", "newco"),
            {"json": {"name": "newco"}},
        ),
        Step(
            admin,
            "POST",
            "/v1/admin/tenants/newco/tokens",
            201,
            "token.create",
            "ok",
            ("sless-newco", "newco"),
            {"json": {"description": "ci"}},
        ),
        Step(
            admin,
            "DELETE",
            "/v1/admin/tenants/newco/tokens/{token_id}",
            200,
            "token.delete",
            "ok",
            ("sless-newco", "newco/{token_id}"),
        ),
        Step(
            admin,
            "PUT",
            "/v1/admin/tenants/newco/limits",
            200,
            "tenant.limits",
            "ok",
            ("sless-newco", "newco"),
            {"json": {"max_triggers": 5}},
        ),
        Step(
            admin,
            "DELETE",
            "/v1/admin/tenants/newco",
            200,
            "tenant.delete",
            "ok",
            ("sless-newco", "newco"),
        ),
        Step(
            admin,
            "POST",
            "/v1/admin/reviews/999/approve",
            404,
            "review.approve",
            "not_found",
            (None, "999"),
            {"json": {"reason": "looks fine"}},
        ),
        Step(
            admin,
            "POST",
            "/v1/admin/reviews/999/reject",
            404,
            "review.reject",
            "not_found",
            (None, "999"),
            {"json": {"reason": "looks bad"}},
        ),
    ]
    tokens: dict[str, Any] = {}
    for step in steps:
        before = _last_id(gateway)
        path = step.path.format(**tokens)
        response = step.client.request(step.method, path, **(step.kwargs or {}))
        assert response.status_code == step.status, (step.method, path, response.text)
        if step.action == "token.create":
            tokens["token_id"] = response.json()["id"]
        new = [r for r in _admin_rows(gateway) if r["id"] > before]
        assert len(new) == 1, (step.method, path, new)
        row = new[0]
        assert row["method"] == step.method
        assert row["action"] == step.action, (path, row)
        assert row["status"] == step.status
        assert row["outcome"] == step.outcome, (path, row)
        target_name = step.target[1].format(**tokens) if step.target[1] else None
        assert (row["target_namespace"], row["target_name"]) == (step.target[0], target_name)
        assert row["client"] == "127.0.0.1"
        if step.client is acme and step.authenticated:
            assert row["actor_kind"] == "tenant"
            assert (row["tenant"], row["namespace"]) == ("acme", "sless-acme")
            assert row["auth_provider"] == "static"
            assert row["auth_subject"].startswith("token:")
        elif step.client is admin and step.authenticated:
            assert row["actor_kind"] == "admin"
            assert (row["tenant"], row["namespace"]) == (None, None)
            assert row["auth_subject"].startswith("token:")
        else:
            assert row["actor_kind"] == "anonymous"
            assert (row["tenant"], row["namespace"], row["auth_subject"]) == (None, None, None)

    # every mutating route of the app was exercised above (a new route needs a step)
    # (routes from the published OpenAPI document: every /v1 route is in it)
    paths = gateway.admin.get("/openapi.json").json()["paths"]
    routes = {
        (method.upper(), path)
        for path, operations in paths.items()
        for method in operations
        if method.upper() in MUTATING
    }
    assert len(routes) >= 15
    exercised = {(r["method"], r["action"]) for r in _admin_rows(gateway)}
    from sless.gateway.audit import action_name

    missing = {(m, p) for m, p in routes if (m, action_name(m, p)) not in exercised}
    assert not missing, f"mutating routes without an audit step: {sorted(missing)}"

    # reads and invocations write nothing
    before = _last_id(gateway)
    acme.get(f"{fn}")
    httpx.post(f"{gateway.url}/fn/sless-acme/hello", json={"x": 1})
    assert _last_id(gateway) == before

    # nothing secret reached any column of any row
    acme_token = token_of(acme)

    async def dump() -> list[str]:
        conn = await asyncpg.connect(database_url)
        try:
            return [r[0] for r in await conn.fetch("SELECT audit_log::text FROM audit_log")]
        finally:
            await conn.close()

    text = "\n".join(asyncio.run(dump()))
    assert text.count("\n") + 1 == len(_admin_rows(gateway))
    for secret in (SECRET_VALUE, "S3cr3t", HEADER_SECRET, QUERY_SECRET, acme_token, ADMIN_TOKEN):
        assert secret not in text
    assert "cobol" not in text  # no body at all, secret or not


def test_tenants_read_only_their_own_log(
    gateway: RunningGateway, acme: httpx.Client, rival: httpx.Client
) -> None:
    acme.put("/v1/namespaces/sless-acme/functions/mine", json={})
    acme.put("/v1/namespaces/sless-rival/functions/theirs", json={})  # 404, in acme's log
    rival.put("/v1/namespaces/sless-rival/functions/own", json={})
    httpx.put(f"{gateway.url}/v1/namespaces/sless-rival/functions/anon", json={})  # 401
    httpx.put(
        f"{gateway.url}/v1/namespaces/sless-rival/functions/forged",
        json={},
        headers={"Authorization": "Bearer sl_t_not-a-real-token"},
    )  # 401

    mine = _tenant_rows(acme, "sless-acme")
    assert [(r["action"], r["target_name"], r["status"]) for r in mine] == [
        ("function.put", "theirs", 404),
        ("function.put", "mine", 201),
    ]
    assert {r["namespace"] for r in mine} == {"sless-acme"}

    theirs = _tenant_rows(rival, "sless-rival")
    # neither acme's attempt nor the unauthenticated ones are in rival's log
    assert [(r["action"], r["target_name"], r["actor_kind"]) for r in theirs] == [
        ("function.put", "own", "tenant")
    ]

    # no way to read another log: 404 like any missing namespace, 401 on the admin view
    for path in ("/v1/namespaces/sless-rival/audit", "/v1/namespaces/SLESS-RIVAL/audit"):
        assert acme.get(path).status_code == 404
    assert acme.get("/v1/admin/audit").status_code == 401
    assert httpx.get(f"{gateway.url}/v1/namespaces/sless-acme/audit").status_code == 401

    # the provider sees everything, and filters by the namespace a row is in or targets
    about_rival = _admin_rows(gateway, namespace="sless-rival")
    kinds = sorted((r["actor_kind"], r["target_name"]) for r in about_rival)
    assert kinds == [
        ("admin", "rival"),
        ("anonymous", "anon"),
        ("anonymous", "forged"),
        ("tenant", "own"),
        ("tenant", "theirs"),
    ]
    assert {r["actor_kind"] for r in _admin_rows(gateway)} == {"admin", "tenant", "anonymous"}
    by_acme = _admin_rows(gateway, tenant="acme")
    assert {r["target_name"] for r in by_acme} == {"mine", "theirs"}
    creations = _admin_rows(gateway, action="tenant.create")
    assert sorted(r["target_name"] for r in creations) == ["acme", "rival"]
    assert gateway.admin.get("/v1/admin/audit", params={"limit": 1001}).status_code == 422


def test_paging_newest_first_without_gaps_or_repeats(acme: httpx.Client) -> None:
    for i in range(7):
        response = acme.put(f"/v1/namespaces/sless-acme/secrets/s{i}", json={"value": "v"})
        assert response.status_code == 201
    seen: list[int] = []
    names: list[str] = []
    before: int | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3}
        if before is not None:
            params["before"] = before
        page = acme.get("/v1/namespaces/sless-acme/audit", params=params).json()
        pages += 1
        seen += [r["id"] for r in page["entries"]]
        names += [r["target_name"] for r in page["entries"]]
        before = page["next_before"]
        if before is None:
            break
    assert pages == 3
    assert seen == sorted(seen, reverse=True)
    assert len(set(seen)) == len(seen) == 7
    assert names == [f"s{i}" for i in reversed(range(7))]
    only = acme.get(
        "/v1/namespaces/sless-acme/audit", params={"action": "secret.put", "limit": 2}
    ).json()
    assert only["count"] == 2
    assert only["next_before"] == only["entries"][-1]["id"]


def test_a_tenant_created_again_does_not_see_its_predecessors_log(
    gateway: RunningGateway,
) -> None:
    first = gateway.tenant("phoenix")
    assert first.put("/v1/namespaces/sless-phoenix/functions/old", json={}).status_code == 201
    assert gateway.admin.delete("/v1/admin/tenants/phoenix").status_code == 200
    second = gateway.tenant("phoenix")
    assert _tenant_rows(second, "sless-phoenix") == []
    # the provider keeps the whole history
    assert [r["target_name"] for r in _admin_rows(gateway, tenant="phoenix")] == ["old"]


class TestWithAnLLM:
    """Uploads reviewed by the local fake model, so that one is held for review."""

    @pytest.fixture
    def llm(self) -> Iterator[FakeLLM]:
        server = FakeLLM()
        server.start()
        yield server
        server.stop()

    @pytest.fixture
    def settings(self, settings: Settings, llm: FakeLLM) -> Settings:
        settings.llm.base_url = llm.base_url
        settings.llm.model = "fake-model"
        settings.llm.timeout_s = 10
        return settings

    def test_review_decisions_name_the_function_and_a_short_reason(
        self, gateway: RunningGateway, llm: FakeLLM, acme: httpx.Client
    ) -> None:
        llm.always(verdict("suspicious", [{"file": "handler.py", "line": 1, "reason": "odd"}]))
        fn = "/v1/namespaces/sless-acme/functions/held"
        acme.put(fn, json={})
        response = acme.post(f"{fn}/upload", content=make_zip(HELLO))
        assert response.status_code == 202, response.text
        review_id = response.json()["review_id"]
        reason = "checked by hand " + "x" * 900
        decided = gateway.admin.post(
            f"/v1/admin/reviews/{review_id}/approve", json={"reason": reason}
        )
        assert decided.status_code == 200, decided.text
        row = _admin_rows(gateway, action="review.approve")[0]
        assert (row["target_namespace"], row["target_name"]) == ("sless-acme", "held")
        assert row["outcome"] == "ok"
        assert row["detail"].startswith("reason: checked by hand")
        assert len(row["detail"]) == 200  # cut short
        again = gateway.admin.post(f"/v1/admin/reviews/{review_id}/reject", json={"reason": "no"})
        assert again.status_code == 409
        row = _admin_rows(gateway, action="review.reject")[0]
        assert (row["outcome"], row["detail"]) == ("conflict", "reason: no")


def _sless(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The real ``sless`` command in its own process (as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "sless.cli", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_prints_the_tenant_and_the_provider_view(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    assert acme.put("/v1/namespaces/sless-acme/secrets/cli", json={"value": "v"}).is_success
    tenant_env = {"SLESS_URL": gateway.url, "SLESS_TOKEN": token_of(acme)}
    table = _sless("audit", env=tenant_env)
    assert table.returncode == 0, table.stderr
    assert "secret.put" in table.stdout
    assert "sless-acme/cli" in table.stdout
    as_json = _sless("audit", "--json", "--limit", "1", env=tenant_env)
    assert as_json.returncode == 0, as_json.stderr
    assert [r["target_name"] for r in json.loads(as_json.stdout)["entries"]] == ["cli"]

    admin_env = {"SLESS_URL": gateway.url, "SLESS_ADMIN_TOKEN": ADMIN_TOKEN}
    result = _sless("admin", "audit", "--json", "--action", "tenant.create", env=admin_env)
    assert result.returncode == 0, result.stderr
    assert [r["target_name"] for r in json.loads(result.stdout)["entries"]] == ["acme"]
    # a tenant token is no admin token
    refused = _sless("admin", "audit", "--admin-token", token_of(acme), env=admin_env)
    assert refused.returncode != 0
    assert "admin token" in refused.stderr


def test_an_exception_in_a_handler_is_recorded_as_an_error(database_url: str) -> None:
    """A handler that raises (the 500 path): the row is written all the same.

    The app inside the middleware is a stand-in that raises; the middleware and
    PostgreSQL are real."""
    from types import SimpleNamespace

    from starlette.types import Message, Receive, Scope, Send

    from sless.gateway.audit import AuditMiddleware
    from sless.store import AuditRepository, create_pool, migrate

    async def failing(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("boom")

    async def scenario() -> list[dict[str, Any]]:
        pool = await create_pool(database_url)
        try:
            await migrate(pool)
            middleware = AuditMiddleware(failing, platform=lambda: SimpleNamespace(db=pool))  # type: ignore[arg-type, return-value]
            scope = {
                "type": "http",
                "method": "DELETE",
                "path": "/v1/namespaces/sless-acme/functions/f",
                "client": ("10.1.2.3", 5555),
                "headers": [],
            }

            async def receive() -> Message:
                return {"type": "http.request", "body": b""}

            async def send(message: Message) -> None:
                raise AssertionError("nothing is sent by the failing app")

            with pytest.raises(RuntimeError, match="boom"):
                await middleware(scope, receive, send)
            return await AuditRepository(pool).list()
        finally:
            await pool.close()

    rows = asyncio.run(scenario())
    assert [(r["status"], r["outcome"], r["actor_kind"], r["client"]) for r in rows] == [
        (500, "error", "anonymous", "10.1.2.3")
    ]

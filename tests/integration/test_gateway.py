"""The embedded platform through its HTTP API: real PostgreSQL, real bubblewrap workers."""

from __future__ import annotations

import time

import httpx
import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, make_zip, wait_phase

pytestmark = pytest.mark.integration

HELLO = {
    "handler.py": (
        "def handle(event, context):\n"
        "    print('called with', event['query'])\n"
        "    return {'hello': event['query'].get('name', 'world'), 'path': event['path']}\n"
    )
}
ECHO_HEADERS = {
    "handler.py": "def handle(event, context):\n    return {'headers': event['headers']}\n"
}


def _function_path(ns: str, name: str) -> str:
    return f"/v1/namespaces/{ns}/functions/{name}"


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


def test_whoami_names_the_tenant_and_namespace(acme: httpx.Client) -> None:
    assert acme.get("/v1/whoami").json() == {"tenant": "acme", "namespace": "sless-acme"}


def test_deploy_invoke_and_record(gateway: RunningGateway, acme: httpx.Client) -> None:
    function = deploy(acme, "sless-acme", "hello", HELLO)
    assert function["status"]["phase"] == "Ready", function["status"]
    assert function["url"].endswith("/fn/sless-acme/hello")

    response = httpx.get(f"{gateway.url}/fn/sless-acme/hello/sub/path?name=Ada")
    assert response.status_code == 200
    assert response.json() == {"hello": "Ada", "path": "/sub/path"}
    invocation_id = response.headers["x-sless-invocation-id"]

    deadline = time.monotonic() + 10
    while True:
        rows = acme.get("/v1/namespaces/sless-acme/invocations", params={"function": "hello"})
        found = [r for r in rows.json()["invocations"] if r["id"] == invocation_id]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert found, "the invocation was not recorded"
    assert found[0]["status"] == 200
    assert found[0]["tenant"] == "acme"
    assert found[0]["request_bytes"] == 0
    assert found[0]["response_bytes"] == len(response.content)

    logs = acme.get(_function_path("sless-acme", "hello") + "/logs").text
    assert "called with {'name': 'Ada'}" in logs


def test_same_code_twice_does_no_work(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "twice", HELLO)
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    builds = backend.builder.builds_run
    response = acme.post(
        _function_path("sless-acme", "twice") + "/upload",
        content=make_zip(HELLO),
        headers={"Content-Type": "application/zip"},
    )
    assert response.status_code == 202
    assert response.json()["unchanged"] is True
    # the same code under another name reuses the build as well
    deploy(acme, "sless-acme", "twice-again", HELLO)
    assert backend.builder.builds_run == builds


def test_authorization_and_hop_by_hop_headers_are_not_forwarded(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, "sless-acme", "headers", ECHO_HEADERS)
    response = httpx.get(
        f"{gateway.url}/fn/sless-acme/headers",
        headers={
            "Authorization": "Bearer secret-of-the-caller",
            "Connection": "keep-alive, X-Drop-Me",
            "X-Drop-Me": "1",
            "X-Sless-Deadline": "0",
            "X-Keep-Me": "yes",
        },
    )
    headers = response.json()["headers"]
    assert "authorization" not in headers
    assert "x-drop-me" not in headers
    assert "x-sless-deadline" not in headers
    assert headers["x-keep-me"] == "yes"


def test_a_header_named_in_connection_is_not_forwarded(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    """RFC 9110 7.6.1: ``Connection: X-Secret`` makes ``X-Secret`` hop-by-hop."""
    deploy(acme, "sless-acme", "conn-named", ECHO_HEADERS)
    url = f"{gateway.url}/fn/sless-acme/conn-named"
    sent = {"Connection": "X-Secret", "X-Secret": "s", "X-Kept": "k"}
    headers = httpx.get(url, headers=sent).json()["headers"]
    assert "x-secret" not in headers
    assert headers["x-kept"] == "k"
    # the same rule holds for a queued call, which stores the headers and sends them later
    queued = httpx.post(url, headers={**sent, "Prefer": "respond-async"})
    assert queued.status_code == 202
    invocation = f"/v1/namespaces/sless-acme/invocations/{queued.json()['invocation_id']}"
    deadline = time.monotonic() + 30
    while (found := acme.get(invocation).json()).get("state") not in (
        "succeeded",
        "failed",
        "dead",
    ):
        assert time.monotonic() < deadline, found
        time.sleep(0.2)
    assert found["state"] == "succeeded", found
    assert "x-secret" not in found["result"]["headers"]
    assert found["result"]["headers"]["x-kept"] == "k"


LEAKY_RESPONSE = {
    # tenant code runs in the worker's process: it can change what the runtime server sends,
    # so the gateway, not the runtime, has to apply the rule to responses
    "handler.py": (
        "import sys\n"
        "sys.modules['__main__'].HOP_BY_HOP.discard('connection')\n"
        "def handle(event, context):\n"
        "    return {'statusCode': 200, 'body': 'ok', 'headers': {\n"
        "        'Connection': 'X-Internal', 'X-Internal': 'secret', 'X-Public': 'p'}}\n"
    )
}


def test_a_header_the_function_names_in_connection_is_not_returned(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, "sless-acme", "conn-leak", LEAKY_RESPONSE)
    with httpx.Client() as client:
        response = client.get(f"{gateway.url}/fn/sless-acme/conn-leak")
        assert response.status_code == 200
        assert response.text == "ok"
        assert response.headers["x-public"] == "p"
        assert "x-internal" not in response.headers
        # the caller's connection stays the gateway's to manage
        assert "x-internal" not in response.headers.get("connection", "").lower()


def test_a_local_proxy_names_the_caller(gateway: RunningGateway, acme: httpx.Client) -> None:
    """Behind a reverse proxy on this machine (a loopback peer, trusted by default), the
    caller of X-Forwarded-For is the client the audit log and the function see."""
    deploy(acme, "sless-acme", "xff", ECHO_HEADERS)
    proxied = {"X-Forwarded-For": "198.51.100.1, 203.0.113.7"}
    response = httpx.get(f"{gateway.url}/fn/sless-acme/xff", headers=proxied)
    assert response.status_code == 200
    # the proxy's chain as it is: it already ends with the caller
    assert response.json()["headers"]["x-forwarded-for"] == "198.51.100.1, 203.0.113.7"
    bogus = httpx.get(f"{gateway.url}/fn/sless-acme/xff", headers={"X-Forwarded-For": "me"})
    assert bogus.json()["headers"]["x-forwarded-for"] == "me, 127.0.0.1"
    acme.put("/v1/namespaces/sless-acme/functions/xff", json={}, headers=proxied)
    [row] = acme.get("/v1/namespaces/sless-acme/audit", params={"limit": 1}).json()["entries"]
    assert row["client"] == "203.0.113.7", row


def test_token_auth_function_needs_the_owners_token(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, "sless-acme", "private", HELLO, {"auth": "token"})
    url = f"{gateway.url}/fn/sless-acme/private"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer nope"}).status_code == 401
    other = gateway.tenant("other")
    other_token = other.headers["Authorization"]
    assert httpx.get(url, headers={"Authorization": other_token}).status_code == 404
    owner = httpx.get(url, headers={"Authorization": acme.headers["Authorization"]})
    assert owner.status_code == 200


def test_unknown_and_not_ready_functions(gateway: RunningGateway, acme: httpx.Client) -> None:
    response = httpx.get(f"{gateway.url}/fn/sless-acme/missing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    acme.put(_function_path("sless-acme", "no-code"), json={})
    time.sleep(0.3)  # the reconciler indexes it
    response = httpx.get(f"{gateway.url}/fn/sless-acme/no-code")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "not_ready"


def test_timeout_gives_504_and_the_worker_is_replaced(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    code = {
        "handler.py": (
            "import time\n"
            "def handle(event, context):\n"
            "    if event['query'].get('sleep'):\n"
            "        time.sleep(60)\n"
            "    return 'awake'\n"
        )
    }
    deploy(acme, "sless-acme", "sleepy", code, {"timeout_s": 1})
    response = httpx.get(f"{gateway.url}/fn/sless-acme/sleepy?sleep=1", timeout=30)
    assert response.status_code == 504
    assert response.json()["error"]["code"] == "timeout"
    assert httpx.get(f"{gateway.url}/fn/sless-acme/sleepy").json() == "awake"
    pool = gateway.app.api.state.platform.backend.pool("sless-acme", "sleepy")  # type: ignore[attr-defined]
    assert pool.killed_on_timeout == 1


def test_body_limit_gives_413(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "limited", HELLO)
    limit = gateway.settings.gateway.max_invoke_body_bytes
    response = httpx.post(f"{gateway.url}/fn/sless-acme/limited", content=b"x" * (limit + 1))
    assert response.status_code == 413


def test_handler_exception_gives_500_without_traceback(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    code = {"handler.py": "def handle(event, context):\n    raise ValueError('kaboom-secret')\n"}
    deploy(acme, "sless-acme", "broken", code)
    response = httpx.get(f"{gateway.url}/fn/sless-acme/broken")
    assert response.status_code == 500
    assert "kaboom" not in response.text
    assert "Traceback" not in response.text
    assert response.json()["error"]["invocation_id"]
    logs = acme.get(_function_path("sless-acme", "broken") + "/logs").text
    assert "kaboom-secret" in logs


def test_failed_build_keeps_the_previous_version_serving(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deploy(acme, "sless-acme", "keeper", HELLO)
    bad = {"handler.py": "import no_such_module_here\ndef handle(event, context):\n    return 1\n"}
    function = deploy(acme, "sless-acme", "keeper", bad, expect="Failed")
    assert function["status"]["phase"] == "Failed"
    assert "no_such_module_here" in function["status"]["message"]
    response = httpx.get(f"{gateway.url}/fn/sless-acme/keeper?name=still")
    assert response.json()["hello"] == "still"


def test_delete_removes_the_function_and_its_build(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    code = {"handler.py": "def handle(event, context):\n    return 'unique-to-delete'\n"}
    deploy(acme, "sless-acme", "doomed", code)
    assert httpx.get(f"{gateway.url}/fn/sless-acme/doomed").status_code == 200
    builds = gateway.settings.data_dir / "builds"
    assert len(list(builds.glob("python3.11-*"))) == 1
    assert acme.delete(_function_path("sless-acme", "doomed")).status_code == 200
    assert httpx.get(f"{gateway.url}/fn/sless-acme/doomed").status_code == 404
    assert acme.get(_function_path("sless-acme", "doomed")).status_code == 404
    assert list(builds.glob("python3.11-*")) == []
    assert list((gateway.settings.data_dir / "blobs").glob("*.zip")) == []


def test_node_function(gateway: RunningGateway, acme: httpx.Client) -> None:
    code = {
        "handler.js": (
            "exports.handle = async (event, context) => "
            "({ method: event.method, body: event.body, fn: context.function });\n"
        )
    }
    function = deploy(acme, "sless-acme", "node-echo", code, {"runtime": "nodejs20"})
    assert function["status"]["phase"] == "Ready", function["status"]
    response = httpx.post(f"{gateway.url}/fn/sless-acme/node-echo", json={"a": 1})
    assert response.json() == {"method": "POST", "body": {"a": 1}, "fn": "node-echo"}


def test_min_instances_keeps_a_worker_warm(gateway: RunningGateway, acme: httpx.Client) -> None:
    deploy(acme, "sless-acme", "warm", HELLO, {"min_instances": 1})
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    deadline = time.monotonic() + 20
    while (pool := backend.pool("sless-acme", "warm")) is None or pool.size < 1:
        assert time.monotonic() < deadline, "no warm worker"
        time.sleep(0.1)
    assert pool.started == 1


def test_ready_means_serving(
    gateway: RunningGateway, acme: httpx.Client, settings: Settings
) -> None:
    """The phase reads Ready only once this gateway serves the function: its pool exists
    and its warm worker is up (a slow import made that take a second after the check)."""
    # an import of a second outlasts the detonation's budget (1 s), which holds the code
    # for review (tests/integration/validation/test_detonation.py): the subject here is
    # the phase, so the running gateway's validation skips that stage
    settings.validation.detonation_enabled = False
    slow = {"handler.py": "import time\ntime.sleep(1.0)\n" + HELLO["handler.py"]}
    deploy(acme, "sless-acme", "slow", slow, {"min_instances": 1})
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    pool = backend.pool("sless-acme", "slow")
    assert pool is not None, "Ready before the function had a pool"
    assert pool.size == 1, "Ready before the warm worker was up"
    response = httpx.get(f"{gateway.url}/fn/sless-acme/slow")
    assert response.status_code == 200, response.text
    assert pool.started == 1


def test_spec_change_restarts_workers_with_the_new_env(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    code = {
        "handler.py": "import os\ndef handle(event, context):\n    return os.environ['GREETING']\n"
    }
    deploy(acme, "sless-acme", "greeter", code, {"env": {"GREETING": "hi"}})
    assert httpx.get(f"{gateway.url}/fn/sless-acme/greeter").json() == "hi"
    path = _function_path("sless-acme", "greeter")
    assert acme.put(path, json={"env": {"GREETING": "hello"}}).status_code == 200
    wait_phase(acme, path, {"Ready"})
    deadline = time.monotonic() + 10
    while httpx.get(f"{gateway.url}/fn/sless-acme/greeter").json() != "hello":
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_crashed_worker_is_replaced(gateway: RunningGateway, acme: httpx.Client) -> None:
    code = {
        "handler.py": (
            "import os, uuid\n"
            "BOOT = uuid.uuid4().hex\n"
            "def handle(event, context):\n"
            "    if event['query'].get('crash'):\n"
            "        os._exit(3)\n"
            "    return BOOT\n"
        )
    }
    deploy(acme, "sless-acme", "crashy", code)
    first = httpx.get(f"{gateway.url}/fn/sless-acme/crashy").json()
    crashed = httpx.get(f"{gateway.url}/fn/sless-acme/crashy?crash=1")
    assert crashed.status_code == 502
    assert crashed.json()["error"]["code"] == "bad_gateway"
    second = httpx.get(f"{gateway.url}/fn/sless-acme/crashy")
    assert second.status_code == 200
    assert second.json() != first  # a new worker process
    pool = gateway.app.api.state.platform.backend.pool("sless-acme", "crashy")  # type: ignore[attr-defined]
    assert pool.crashed >= 1


def test_cookies_do_not_leak_between_callers(gateway: RunningGateway, acme: httpx.Client) -> None:
    code = {
        "handler.py": (
            "def handle(event, context):\n"
            "    return {'statusCode': 200, 'headers': {'Set-Cookie': 'session=alice'},\n"
            "            'body': event['headers'].get('cookie', 'none')}\n"
        )
    }
    deploy(acme, "sless-acme", "cookies", code, {"concurrency": 1})
    first = httpx.get(f"{gateway.url}/fn/sless-acme/cookies")
    # scoped to the function's own path (sless.gateway.pages)
    assert first.headers["set-cookie"] == "session=alice; Path=/fn/sless-acme/cookies"
    # another caller on the same worker must not be sent alice's cookie
    assert httpx.get(f"{gateway.url}/fn/sless-acme/cookies").text == "none"


def test_first_calls_are_served_by_distinct_prestarted_workers(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    code = {
        "handler.py": (
            "import os\n"
            "def handle(event, context):\n"
            "    return {'pid': os.getpid(), 'ns': context.namespace, 'fn': context.function,\n"
            "            'files': sorted(os.listdir('/code'))}\n"
        ),
        "only_in_a.py": "",
    }
    other = gateway.tenant("globex")
    deploy(acme, "sless-acme", "pooled-a", code)
    deploy(other, "sless-globex", "pooled-b", {"handler.py": code["handler.py"]})
    backend = gateway.app.api.state.platform.backend  # type: ignore[attr-defined]
    assert backend.prestart is not None
    before = backend.prestart.handed_out
    a = httpx.get(f"{gateway.url}/fn/sless-acme/pooled-a").json()
    b = httpx.get(f"{gateway.url}/fn/sless-globex/pooled-b").json()
    assert (a["ns"], a["fn"]) == ("sless-acme", "pooled-a")
    assert (b["ns"], b["fn"]) == ("sless-globex", "pooled-b")
    assert a["files"] == ["handler.py", "only_in_a.py"]
    assert b["files"] == ["handler.py"]
    assert backend.prestart.handed_out == before + 2
    pids_a = backend.pool("sless-acme", "pooled-a").worker_pids()
    pids_b = backend.pool("sless-globex", "pooled-b").worker_pids()
    assert pids_a
    assert pids_b
    assert not pids_a & pids_b


def test_the_start_up_heap_is_frozen_out_of_the_collector(gateway: RunningGateway) -> None:
    import gc

    from sless.gateway.app import GC_GEN0_THRESHOLD

    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == GC_GEN0_THRESHOLD

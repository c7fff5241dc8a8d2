"""Attack: tenant A reaches tenant B's objects through some form of the path.

In the spirit of the Kubernetes multi-tenancy benchmarks: B has a token-auth function
(with invocations, logs and a validation report), a trigger, a job, a secret and audit
entries. With A's token, every route of the management API that takes a ``{ns}`` (read
from the app itself, so a new route is covered without editing this file) is called with
B's namespace in every form (exact, other case, percent-encoded, encoded ``/`` and ``..``,
trailing and double slashes, dot segments), and with A's own namespace and B's object
names. Every answer must be the one a namespace that does not exist gets (404, or the
401/405/422/redirect that the path's shape gives anyway), never 2xx, never one of B's
values; B's objects are unchanged afterwards. The same for ``/fn/{ns}/{name}``.

Requests go through ``http.client`` so that paths reach the server byte for byte (httpx
would normalise ``..`` and ``//`` away before sending).
"""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.routing import iter_route_contexts

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.support import deploy, make_zip

pytestmark = pytest.mark.integration

A_NS = "sless-alpha"
B_NS = "sless-bravo"
NOBODY_NS = "sless-nobody"
SECRET_VALUE = "amqp://bravo:Br4vo-S3cret-91@broker:5672/"
ENV_MARKER = "bravo-env-marker-5e1f"
LOG_MARKER = "bravo-log-marker-0c7d"
RESPONSE_MARKER = "bravo-response-marker-a3b9"
B_CODE = {
    "handler.py": (
        "def handle(event, context):\n"
        f"    print({LOG_MARKER!r})\n"
        f"    return {{'marker': {RESPONSE_MARKER!r}}}\n"
    )
}
#: B's object names, per collection of the path
B_NAMES = {
    "functions": "bfunc",
    "triggers": "btrig",
    "jobs": "bjob",
    "secrets": "bsecret",
}
#: what a request that wants to change B's objects sends, per collection
BODIES: dict[str, tuple[bytes, str]] = {
    "functions": (json.dumps({"env": {"PWNED": "1"}}).encode(), "application/json"),
    "upload": (
        make_zip({"handler.py": "def handle(e, c):\n    return 'pwned'\n"}),
        "application/zip",
    ),
    "triggers": (json.dumps({"type": "http", "function": "bfunc"}).encode(), "application/json"),
    "jobs": (json.dumps({"function": "bfunc", "run_id": 99}).encode(), "application/json"),
    "secrets": (json.dumps({"value": "pwned"}).encode(), "application/json"),
}
#: answers that say "no such thing here" (or are about the path's shape, not B)
REFUSALS = {401, 404, 405, 422}
REDIRECTS = {307, 308}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # hundreds of requests from one tenant: the API rate limit is not under test here
    settings.limits.api_rate_per_s = 100_000
    settings.limits.api_burst = 100_000
    # what is under test is isolation, not the upload's static analysis (tested elsewhere):
    # B's function must reach Ready with whatever semgrep the machine has
    settings.validation.static_enabled = False
    settings.validation.detonation_enabled = False  # the attack must run to be contained
    return settings


@dataclass
class Answer:
    status: int
    location: str | None
    body: str


def send(
    gateway: RunningGateway,
    method: str,
    path: str,
    token: str | None,
    body: bytes | None = None,
    content_type: str | None = None,
    extra: dict[str, str] | None = None,
    *,
    whole: bool = True,
) -> Answer:
    """One request with ``path`` exactly as given (no normalisation on the way); without
    ``whole``, the status alone (a followed log stream never ends)."""
    url = urlsplit(gateway.url)
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
    headers = dict(extra or {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if content_type:
        headers["Content-Type"] = content_type
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace") if whole else ""
        return Answer(response.status, response.getheader("location"), text)
    finally:
        conn.close()


def token_of(client: httpx.Client) -> str:
    return str(client.headers["authorization"]).removeprefix("Bearer ")


@dataclass
class World:
    a: httpx.Client
    b: httpx.Client
    a_token: str
    b_token: str
    invocation_ids: list[str]
    code_sha256: str

    @property
    def markers(self) -> list[str]:
        """B's values: none may ever reach A."""
        return [
            SECRET_VALUE,
            "Br4vo-S3cret",
            ENV_MARKER,
            LOG_MARKER,
            RESPONSE_MARKER,
            self.code_sha256,
            self.b_token,
            *self.invocation_ids,
        ]


def _wait(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def world(gateway: RunningGateway) -> World:
    a = gateway.tenant("alpha")
    b = gateway.tenant("bravo")
    function = deploy(b, B_NS, "bfunc", B_CODE, {"auth": "token", "env": {"M": ENV_MARKER}})
    assert function["status"]["phase"] == "Ready", function["status"]
    assert function["status"]["validation"]["verdict"] == "allow"
    assert b.put(f"/v1/namespaces/{B_NS}/secrets/bsecret", json={"value": SECRET_VALUE}).is_success
    trigger = {"type": "http", "function": "bfunc"}
    assert b.put(f"/v1/namespaces/{B_NS}/triggers/btrig", json=trigger).is_success
    job = {"function": "bfunc", "run_id": 1}
    assert b.put(f"/v1/namespaces/{B_NS}/jobs/bjob", json=job).is_success
    called = httpx.get(
        f"{gateway.url}/fn/{B_NS}/bfunc", headers={"Authorization": b.headers["authorization"]}
    )
    assert called.status_code == 200
    assert called.json() == {"marker": RESPONSE_MARKER}

    def invocations() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = b.get(f"/v1/namespaces/{B_NS}/invocations").json()[
            "invocations"
        ]
        return rows

    # the direct call and the job's run
    _wait(lambda: len(invocations()) >= 2, "B's invocations to be recorded")
    _wait(
        lambda: LOG_MARKER in b.get(f"/v1/namespaces/{B_NS}/functions/bfunc/logs").text,
        "B's logs",
    )
    assert b.get(f"/v1/namespaces/{B_NS}/audit").json()["count"] >= 5
    return World(
        a=a,
        b=b,
        a_token=token_of(a),
        b_token=token_of(b),
        invocation_ids=[row["id"] for row in invocations()],
        code_sha256=function["spec"]["code"]["sha256"],
    )


def snapshot(world: World) -> dict[str, Any]:
    """B's objects as B sees them (without what changes by itself: status, times)."""
    b = world.b
    ns = f"/v1/namespaces/{B_NS}"
    return {
        "functions": {f["name"]: f["spec"] for f in b.get(f"{ns}/functions").json()["functions"]},
        "triggers": {t["name"]: t["spec"] for t in b.get(f"{ns}/triggers").json()["triggers"]},
        "jobs": {j["name"]: j["spec"] for j in b.get(f"{ns}/jobs").json()["jobs"]},
        "secrets": b.get(f"{ns}/secrets").json()["secrets"],
        "validation": b.get(f"{ns}/functions/bfunc/validation").json(),
        "audit": b.get(f"{ns}/audit", params={"limit": 1000}).json()["entries"],
    }


# -- the routes, from the app ------------------------------------------------------------


def ns_routes(gateway: RunningGateway) -> set[tuple[str, str]]:
    """Every (method, path template) of the management API that takes a ``{ns}``."""
    api = gateway.app.api  # type: ignore[attr-defined]
    found = set()
    for context in iter_route_contexts(api.routes):
        path = context.path
        methods = getattr(context, "methods", None) or ()
        if path and "{ns}" in path:
            found.update((m, path) for m in methods if m != "HEAD")
    assert len(found) >= 20, found  # the app's routes were found at all
    return found


def fill(template: str, ns: str, world: World) -> str:
    """The template with ``ns`` and B's object names for its other parameters."""
    parts = template.split("/")
    out = []
    for i, part in enumerate(parts):
        if part == "{ns}":
            out.append(ns)
        elif part == "{invocation_id}":
            out.append(world.invocation_ids[0])
        elif part.startswith("{"):
            out.append(B_NAMES.get(parts[i - 1], "bfunc"))
        else:
            out.append(part)
    path = "/".join(out)
    if template.endswith("/invocations"):
        path += "?function=bfunc"
    return path


def body_for(method: str, template: str) -> tuple[bytes | None, str | None]:
    if method not in ("PUT", "POST", "PATCH"):
        return None, None
    last = [p for p in template.split("/") if not p.startswith("{")][-1]
    return BODIES.get(last, (b"{}", "application/json"))


def _encode_all(text: str) -> str:
    return "".join(f"%{byte:02X}" for byte in text.encode())


#: B's namespace in every form; each takes (the namespace to aim at, A's namespace)
NS_FORMS: dict[str, Callable[[str, str], str]] = {
    "exact": lambda target, own: target,
    "upper": lambda target, own: target.upper(),
    "mixed": lambda target, own: target.title(),
    "one-char-encoded": lambda target, own: "%73" + target[1:],
    "all-encoded": lambda target, own: _encode_all(target),
    "encoded-slash-up": lambda target, own: f"{own}%2F..%2F{target}",
    "encoded-dots": lambda target, own: f"{own}/%2E%2E/{target}",
    "dot-dot": lambda target, own: f"{own}/../{target}",
    "dot": lambda target, own: f"./{target}",
    "leading-space": lambda target, own: "%20" + target,
    "trailing-nul": lambda target, own: target + "%00",
}
#: then the whole path in other shapes
PATH_SHAPES: dict[str, Callable[[str], str]] = {
    "plain": lambda path: path,
    "trailing-slash": lambda path: path.replace("?", "/?") if "?" in path else path + "/",
    "double-slash": lambda path: path.replace("/namespaces/", "/namespaces//", 1),
    "double-slash-after": lambda path: re.sub(r"^(/v1/namespaces/[^/]+)/", r"\1//", path),
    "double-slash-root": lambda path: path.replace("/v1/", "/v1//", 1),
}

_TENANT_WORD = re.compile("bravo|nobody", re.IGNORECASE)


def _same_shape(text: str) -> str:
    """A body with the aimed-at namespace blanked, to compare B's answer with nobody's."""
    return _TENANT_WORD.sub("X", text)


def attempt(gateway: RunningGateway, world: World, method: str, template: str, path: str) -> Answer:
    """A's request, following one redirect (the slash redirect) with the same token."""
    body, content_type = body_for(method, template)
    answer = send(gateway, method, path, world.a_token, body, content_type)
    if answer.status in REDIRECTS and answer.location:
        target = urlsplit(answer.location)
        followed = target.path + (f"?{target.query}" if target.query else "")
        answer = send(gateway, method, followed, world.a_token, body, content_type)
    return answer


def test_another_tenants_namespace_in_every_form_is_missing(
    gateway: RunningGateway, world: World
) -> None:
    before = snapshot(world)
    routes = ns_routes(gateway)
    exercised: set[tuple[str, str]] = set()
    problems: list[str] = []
    for method, template in sorted(routes):
        # the route and B's names are right: B itself gets its objects this way
        if method == "GET":
            stream = template.endswith("/logs/stream")
            own = send(
                gateway, method, fill(template, B_NS, world), world.b_token, whole=not stream
            )
            assert own.status == 200, (template, own)
        for form_name, form in NS_FORMS.items():
            for shape_name, shape in PATH_SHAPES.items():
                aimed = shape(fill(template, form(B_NS, A_NS), world))
                missing = shape(fill(template, form(NOBODY_NS, A_NS), world))
                theirs = attempt(gateway, world, method, template, aimed)
                nobodys = attempt(gateway, world, method, template, missing)
                where = f"{method} {aimed} ({form_name}, {shape_name})"
                if theirs.status not in REFUSALS:
                    problems.append(f"{where}: {theirs.status} {theirs.body[:200]}")
                elif (theirs.status, _same_shape(theirs.body)) != (
                    nobodys.status,
                    _same_shape(nobodys.body),
                ):
                    problems.append(
                        f"{where}: {theirs.status} {theirs.body[:200]} differs from a missing"
                        f" namespace's {nobodys.status} {nobodys.body[:200]}"
                    )
                leaked = [m for m in world.markers if m in theirs.body]
                if leaked:
                    problems.append(f"{where}: B's data in the answer: {leaked}")
        exercised.add((method, template))
    assert not problems, "\n".join(problems)
    assert exercised == routes
    assert snapshot(world) == before
    # A's own view holds nothing of B's either
    a_ns = f"/v1/namespaces/{A_NS}"
    assert world.a.get(f"{a_ns}/invocations").json()["count"] == 0
    assert world.a.get(f"{a_ns}/functions").json()["count"] == 0


def test_own_namespace_with_the_other_tenants_names_finds_nothing(
    gateway: RunningGateway, world: World
) -> None:
    before = snapshot(world)
    problems: list[str] = []
    routes = ns_routes(gateway)
    for method, template in sorted(routes):
        named = template.count("{") > 1
        last = [p for p in template.split("/") if not p.startswith("{")][-1]
        if method == "PUT" and last in ("functions", "secrets"):
            continue  # creating A's own "bfunc" or "bsecret" is A's right, and touches no B
        path = fill(template, A_NS, world)
        answer = attempt(gateway, world, method, template, path)
        where = f"{method} {path}"
        leaked = [m for m in world.markers if m in answer.body]
        if leaked:
            problems.append(f"{where}: B's data in the answer: {leaked}")
        if named and answer.status not in REFUSALS:
            # B's names in A's namespace: nothing there (a trigger or a job that names
            # B's function is refused: the function must be in the same namespace)
            problems.append(f"{where}: {answer.status} {answer.body[:200]}")
        if not named and method == "GET" and answer.status == 200:
            listed = json.loads(answer.body) if answer.body.startswith("{") else {}
            listing = template.endswith(("/functions", "/triggers", "/jobs", "/secrets"))
            if listing and listed.get("count") != 0:
                problems.append(f"{where}: lists {listed}")
    assert not problems, "\n".join(problems)
    assert snapshot(world) == before


FN_FORMS = [
    f"/fn/{B_NS}/bfunc",
    f"/fn/{B_NS}/bfunc/",
    f"/fn/{B_NS}/bfunc/sub/path?x=1",
    f"/fn/{B_NS.upper()}/bfunc",
    f"/fn/{B_NS}/BFUNC",
    f"/fn/{B_NS.title()}/Bfunc",
    f"/fn/%73{B_NS[1:]}/bfunc",
    f"/fn/{B_NS}/%62func",
    f"/fn/{_encode_all(B_NS)}/{_encode_all('bfunc')}",
    f"/fn/{B_NS}%2Fbfunc",
    f"/fn/{A_NS}/../{B_NS}/bfunc",
    f"/fn/{A_NS}/%2E%2E/{B_NS}/bfunc",
    f"/fn/{A_NS}%2F..%2F{B_NS}/bfunc",
    f"/fn//{B_NS}/bfunc",
    f"/fn/{B_NS}//bfunc",
    f"/fn/./{B_NS}/bfunc",
    f"/fn/{A_NS}/bfunc",
]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_fn_path_in_every_form_refuses_another_tenants_token(
    gateway: RunningGateway, world: World, asynchronous: bool
) -> None:
    extra = {"X-Sless-Async": "true"} if asynchronous else {}
    owner = send(gateway, "GET", FN_FORMS[0], world.b_token, extra=extra)
    assert owner.status == (202 if asynchronous else 200)  # the path is right
    problems = []
    for path in FN_FORMS:
        for method in ("GET", "POST", "PUT", "DELETE"):
            body = b'{"x": 1}' if method in ("POST", "PUT") else None
            answer = send(
                gateway, method, path, world.a_token, body, "application/json", extra=extra
            )
            if answer.status != 404:
                problems.append(f"{method} {path}: {answer.status} {answer.body[:200]}")
            leaked = [m for m in world.markers if m in answer.body]
            if leaked:
                problems.append(f"{method} {path}: B's data in the answer: {leaked}")
    assert not problems, "\n".join(problems)

    # nothing of A's ran B's function: only B's own three runs (the direct call, the
    # job's run, the call above) wrote to its log, and were recorded as succeeded
    def runs() -> int:
        return world.b.get(f"/v1/namespaces/{B_NS}/functions/bfunc/logs").text.count(LOG_MARKER)

    _wait(lambda: runs() >= 3, "B's own call to run")
    time.sleep(1)  # a call A had queued would run by now
    assert runs() == 3
    invocations = world.b.get(f"/v1/namespaces/{B_NS}/invocations").json()["invocations"]
    assert sum(1 for row in invocations if row["status"] == 200) == 3

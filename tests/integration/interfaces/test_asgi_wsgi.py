"""ASGI and WSGI apps served as the function (``interface: asgi`` / ``wsgi``).

A module-level app (``app = FastAPI()``, ``app = Flask(__name__)``) gets every path under
``/fn/{ns}/{name}/`` (the part after the function's name is the app's path); ASGI lifespan
events are honoured (ASGI 3 "Lifespan Protocol": startup before the first request, its
state in each request's scope, a failed startup keeps the function from serving). These
apps are written to the specifications alone (PEP 3333, asgiref's spec), without a
framework: the sandbox installs no dependency from the network in tests.
"""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.interfaces.conftest import deployed
from tests.support import deploy, wait_for, wait_phase

pytestmark = pytest.mark.integration

ASGI_APP = {
    "app.py": """
import json

events = []


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                events.append("startup")
                scope["state"]["db"] = "connected"
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                events.append("shutdown")
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope["path"]
    if path.startswith("/users/") and scope["method"] == "GET":
        user = path.rsplit("/", 1)[1]
        await respond(send, 200, {"user": user, "db": scope["state"].get("db"), "events": events})
    elif path == "/users" and scope["method"] == "POST":
        await respond(send, 201, {"created": json.loads(body)})
    elif path == "/image":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"image/png")]})
        await send({"type": "http.response.body", "body": bytes([0, 1]), "more_body": True})
        await send({"type": "http.response.body", "body": bytes([2, 255])})
    elif path == "/login":
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"set-cookie", b"session=abc"), (b"set-cookie", b"theme=dark"),
            (b"x-cookie-seen", dict(scope["headers"]).get(b"cookie", b"none"))]})
        await send({"type": "http.response.body", "body": b"welcome"})
    elif path == "/search":
        await respond(send, 200, {"qs": scope["query_string"].decode(), "root": scope["root_path"]})
    elif path == "/boom":
        raise RuntimeError("a bug with a secret")
    else:
        await respond(send, 404, {"detail": "Not Found"})


async def respond(send, status, value):
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(value).encode()})
"""
}


def test_asgi_app_routes_and_lifespan(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "asgi-app", ASGI_APP, {"interface": "asgi"})
    user = fn.call("GET", "/users/42")
    assert user.status_code == 200
    # startup ran once, before the request; its state reached the request's scope
    assert user.json() == {"user": "42", "db": "connected", "events": ["startup"]}
    created = fn.call("POST", "/users", json={"name": "ada"})
    assert (created.status_code, created.json()) == (201, {"created": {"name": "ada"}})
    image = fn.call("GET", "/image")
    assert (image.headers["content-type"], image.content) == ("image/png", bytes([0, 1, 2, 255]))
    login = fn.call("GET", "/login", headers={"Cookie": "a=1"})
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc", "theme=dark")
    assert login.headers["x-cookie-seen"] == "a=1"
    search = fn.call("GET", "/search?q=a%20b&tag=1&tag=2")
    assert search.json() == {"qs": "q=a%20b&tag=1&tag=2", "root": ""}
    assert fn.call("GET", "/nowhere").status_code == 404
    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert "secret" not in boom.text


def test_asgi_failed_startup_never_serves(gateway: RunningGateway, acme: httpx.Client) -> None:
    failing = {
        "app.py": (
            "async def app(scope, receive, send):\n"
            "    if scope['type'] == 'lifespan':\n"
            "        await receive()\n"
            "        await send({'type': 'lifespan.startup.failed', 'message': 'no database'})\n"
            "        return\n"
            "    raise AssertionError('served after a failed startup')\n"
        )
    }
    # the build's check imports the app; the startup runs where the app serves
    function = deploy(acme, "sless-acme", "asgi-down", failing, {"interface": "asgi"})
    assert function["status"]["phase"] == "Ready", function["status"]
    response = httpx.get(f"{gateway.url}/fn/sless-acme/asgi-down/", timeout=30)
    print(response.status_code, response.text)
    assert response.status_code == 502
    logs = acme.get("/v1/namespaces/sless-acme/functions/asgi-down/logs").text
    assert "lifespan startup failed: no database" in logs
    assert "served after a failed startup" not in logs


WSGI_APP = {
    "app.py": """
import json


def app(environ, start_response):
    path = environ["PATH_INFO"]
    method = environ["REQUEST_METHOD"]
    if path.startswith("/users/") and method == "GET":
        return answer(start_response, "200 OK", {"user": path.rsplit("/", 1)[1]})
    if path == "/users" and method == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        item = json.loads(environ["wsgi.input"].read(length))
        created = {"created": item, "type": environ["CONTENT_TYPE"]}
        return answer(start_response, "201 CREATED", created)
    if path == "/image":
        start_response("200 OK", [("Content-Type", "image/png")])
        return [bytes([0, 1]), bytes([2, 255])]
    if path == "/login":
        start_response("200 OK", [("Set-Cookie", "session=abc"), ("Set-Cookie", "theme=dark"),
                                  ("X-Cookie-Seen", environ.get("HTTP_COOKIE", "none"))])
        return [b"welcome"]
    if path == "/search":
        return answer(start_response, "200 OK", {
            "qs": environ["QUERY_STRING"], "script": environ["SCRIPT_NAME"],
            "underscore": environ.get("HTTP_X_TENANT", "absent")})
    if path == "/boom":
        raise RuntimeError("a bug with a secret")
    return answer(start_response, "404 NOT FOUND", {"detail": "Not Found"})


def answer(start_response, status, value):
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(value).encode()]
"""
}


def test_wsgi_app_routes(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "wsgi-app", WSGI_APP, {"interface": "wsgi"})
    assert fn.call("GET", "/users/42").json() == {"user": "42"}
    created = fn.call("POST", "/users", json={"name": "ada"})
    assert created.status_code == 201
    assert created.json() == {"created": {"name": "ada"}, "type": "application/json"}
    image = fn.call("GET", "/image")
    assert (image.headers["content-type"], image.content) == ("image/png", bytes([0, 1, 2, 255]))
    login = fn.call("GET", "/login", headers={"Cookie": "a=1"})
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc", "theme=dark")
    assert login.headers["x-cookie-seen"] == "a=1"
    # a header spelled with an underscore never reads as its dashed twin (gunicorn's rule)
    search = fn.call("GET", "/search?q=a%20b", headers={"X_Tenant": "other"})
    assert search.json() == {"qs": "q=a%20b", "script": "", "underscore": "absent"}
    assert fn.call("GET", "/nowhere").status_code == 404
    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert "secret" not in boom.text


def test_wsgi_and_asgi_are_python_only(acme: httpx.Client) -> None:
    for interface in ("asgi", "wsgi"):
        response = acme.put(
            "/v1/namespaces/sless-acme/functions/js-app",
            json={"runtime": "nodejs20", "interface": interface},
        )
        assert response.status_code == 422, response.text
        assert "not available for nodejs20" in response.text
    response = acme.put(
        "/v1/namespaces/sless-acme/functions/odd",
        json={"interface": "openfaas", "payload_format_version": "1.0"},
    )
    assert response.status_code == 422
    response = acme.put("/v1/namespaces/sless-acme/functions/odd", json={"interface": "azure"})
    assert response.status_code == 422


def test_changing_the_interface_changes_what_serves(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    """A spec PUT that only changes ``interface`` makes a new version: its workers speak the
    new contract (none of the old adapter's workers keeps serving)."""
    both = {
        "handler.py": (
            "def handle(event, context):\n    return {'contract': 'sless'}\n\n"
            "def lambda_handler(event, context):\n    return {'contract': event['version']}\n"
        )
    }
    fn = deployed(gateway, acme, "switch", both, {})
    assert fn.call("GET").json() == {"contract": "sless"}
    path = "/v1/namespaces/sless-acme/functions/switch"
    spec = {"interface": "lambda", "entrypoint": "handler.lambda_handler"}
    response = acme.put(path, json=spec)
    assert response.status_code == 200, response.text
    wait_phase(acme, path, {"Ready"})

    def switched() -> bool:
        return bool(fn.call("GET").json() == {"contract": "2.0"})

    wait_for("the lambda contract to serve", switched, timeout=60)

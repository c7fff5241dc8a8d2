"""Knative ``func`` functions, unmodified (``interface: knative``).

Python: the ``python``/``http`` template (knative.dev "Python functions"): ``new()`` returns
the function; ``handle(scope, receive, send)`` is ASGI; ``start(cfg)`` gets the environment,
``stop()`` runs at the end; ``alive()``/``ready()`` answer ``/health/liveness`` and
``/health/readiness``. Node.js: the ``node``/``http`` template ("Node.js functions"):
``handle(context, body)``; a string answer is ``text/plain``, an object JSON, nothing 204,
``{statusCode, headers, body}`` a response, with the runtime's CORS headers.
"""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.interfaces.conftest import deployed

pytestmark = pytest.mark.integration

#: the python/http template, as `func create -l python` writes it
PY_TEMPLATE = {
    "function/__init__.py": "from .func import new\n",
    "function/func.py": """
import logging


def new():
    return Function()


class Function:
    def __init__(self):
        self.greeting = None

    async def handle(self, scope, receive, send):
        logging.info("OK: Request Received")
        await send({
            "type": "http.response.start",
            "status": 200,
            "headers": [[b"content-type", b"text/plain"]],
        })
        await send({"type": "http.response.body", "body": "OK".encode()})

    def start(self, cfg):
        logging.info("Function starting")

    def stop(self):
        logging.info("Function stopping")

    def alive(self):
        return True, "Alive"

    def ready(self):
        return True, "Ready"
""",
}

PY_API = {
    "function/__init__.py": "from .func import new\n",
    "function/func.py": """
import json


def new():
    return Function()


class Function:
    def __init__(self):
        self.greeting = "unset"
        self.warm = False

    def start(self, cfg):
        self.greeting = cfg.get("GREETING", "none")
        self.warm = True

    def ready(self):
        return (self.warm, "warm" if self.warm else "cold")

    async def handle(self, scope, receive, send):
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        headers = [[b"content-type", b"application/json"]]
        if path == "/image":
            headers, out = [[b"content-type", b"image/png"]], bytes([0, 1, 2, 255])
        elif path == "/login":
            headers = [[b"set-cookie", b"session=abc"], [b"set-cookie", b"theme=dark"]]
            out = b"welcome"
        elif path == "/boom":
            raise ValueError("a bug with a secret")
        else:
            out = json.dumps({
                "greeting": self.greeting,
                "method": scope["method"],
                "path": path,
                "query": scope["query_string"].decode(),
                "body": json.loads(body) if body else None,
                "agent": dict(scope["headers"]).get(b"user-agent", b"").decode(),
            }).encode()
        status = 201 if scope["method"] == "POST" else 200
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": out})
""",
}


def test_python_template(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "kn-hello", PY_TEMPLATE, {"interface": "knative"})
    response = fn.call("GET")
    assert (response.status_code, response.headers["content-type"], response.text) == (
        200,
        "text/plain",
        "OK",
    )
    assert fn.call("GET", "/health/liveness").text == "Alive"
    assert fn.call("GET", "/health/readiness").text == "Ready"


def test_python_functions(gateway: RunningGateway, acme: httpx.Client) -> None:
    spec = {"interface": "knative", "env": {"GREETING": "hi"}}
    fn = deployed(gateway, acme, "kn-api", PY_API, spec)
    created = fn.call("POST", "/items?x=1&x=2", json={"name": "pen"}, headers={"user-agent": "t/1"})
    assert created.status_code == 201
    assert created.json() == {
        "greeting": "hi",  # start(cfg) ran, with the function's environment
        "method": "POST",
        "path": "/items",
        "query": "x=1&x=2",
        "body": {"name": "pen"},
        "agent": "t/1",
    }
    ready = fn.call("GET", "/health/readiness")
    assert (ready.status_code, ready.text) == (200, "warm")
    image = fn.call("GET", "/image")
    assert (image.headers["content-type"], image.content) == ("image/png", bytes([0, 1, 2, 255]))
    login = fn.call("GET", "/login")
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc", "theme=dark")
    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert "secret" not in boom.text


#: the node/http template's index.js
JS_TEMPLATE = {
    "index.js": r"""
const handle = async (context, body) => {
  context.log.info('query', context.query);
  context.log.info('body', body);
  if (context.method === 'POST') {
    return { body };
  } else if (context.method === 'GET') {
    return { query: context.query };
  } else {
    return { statusCode: 405, statusMessage: 'Method not allowed' };
  }
};

module.exports = { handle };
""",
}

JS_API = {
    "index.js": r"""
const handle = async (context, body) => {
  const path = context.headers['x-route'];
  if (path === 'text') return 'plain words';
  if (path === 'empty') return undefined;
  if (path === 'image') {
    return { headers: { 'Content-Type': 'image/png' }, body: Buffer.from([0, 1, 2, 255]) };
  }
  if (path === 'cookie') {
    return { statusCode: 201, headers: { 'Set-Cookie': 'session=abc' }, body: 'set' };
  }
  if (path === 'boom') throw new Error('a bug with a secret');
  return { got: body, q: context.query.q, method: context.method };
};

module.exports = { handle };
""",
}


def test_node_template(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(
        gateway, acme, "kn-node-hello", JS_TEMPLATE, {"runtime": "nodejs20", "interface": "knative"}
    )
    posted = fn.call("POST", json={"a": 1})
    assert posted.status_code == 200
    assert posted.headers["content-type"] == "application/json; charset=utf8"
    assert posted.headers["access-control-allow-origin"] == "*"
    assert posted.json() == {"a": 1}
    got = fn.call("GET", "?name=ada")
    assert got.json() == {"query": {"name": "ada"}}
    assert fn.call("DELETE").status_code == 405


def test_node_functions(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(
        gateway, acme, "kn-node-api", JS_API, {"runtime": "nodejs20", "interface": "knative"}
    )
    got = fn.call("POST", "?q=pens", json={"name": "pen"})
    assert got.json() == {"got": {"name": "pen"}, "q": "pens", "method": "POST"}
    text = fn.call("GET", headers={"x-route": "text"})
    assert (text.headers["content-type"], text.text) == ("text/plain; charset=utf8", "plain words")
    assert fn.call("GET", headers={"x-route": "empty"}).status_code == 204
    image = fn.call("GET", headers={"x-route": "image"})
    assert image.content == bytes([0, 1, 2, 255])
    cookie = fn.call("GET", headers={"x-route": "cookie"})
    assert (cookie.status_code, cookie.headers["set-cookie"], cookie.text) == (
        201,
        fn.scoped("session=abc")[0],
        "set",
    )
    boom = fn.call("GET", headers={"x-route": "boom"})
    assert boom.status_code == 500
    assert "secret" not in boom.text

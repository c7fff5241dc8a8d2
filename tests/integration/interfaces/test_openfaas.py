"""OpenFaaS functions, unmodified (``interface: openfaas``).

Python: the ``python3-http`` template's contract (docs.openfaas.com, "Python" language
guide): ``handle(event, context)``, ``event.body`` bytes, ``event.headers`` read in any case,
``event.method``, ``event.query``, ``event.path``, ``context.hostname``; a dict answer whose
``body`` dict becomes JSON, a string is sent as is (Flask: ``text/html``), bytes with
``Content-type: application/octet-stream`` as they are. Node.js: the ``node20`` template
("Node.js" guide): ``module.exports = async (event, context)``, ``context.status().headers()
.succeed()`` / ``fail()``, an object answer sent as ``JSON.stringify`` of it.
"""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.interfaces.conftest import deployed

pytestmark = pytest.mark.integration

#: the python3-http template's handler.py
PY_TEMPLATE = {
    "handler.py": (
        "def handle(event, context):\n"
        "    return {\n"
        '        "statusCode": 200,\n'
        '        "body": "Hello from OpenFaaS!"\n'
        "    }\n"
    )
}

PY_API = {
    "handler.py": """
import json


def handle(event, context):
    if event.path == "/items" and event.method == "POST":
        item = json.loads(event.body)
        return {"statusCode": 201, "body": {"id": 7, **item}}
    if event.path == "/image":
        return {
            "statusCode": 200,
            "headers": {"Content-type": "application/octet-stream"},
            "body": bytes([0, 1, 2, 255]),
        }
    if event.path == "/login":
        return {
            "statusCode": 200,
            "headers": [("Set-Cookie", "session=abc"), ("Set-Cookie", "theme=dark"),
                        ("X-Key-Seen", event.headers.get("X-Api-Key", "none"))],
            "body": "welcome",
        }
    if event.path == "/search":
        found = {"q": event.query.get("q"), "tags": event.query.getlist("tag")}
        return {"statusCode": 200, "body": found}
    if event.path == "/boom":
        raise ValueError("a bug")
    return {
        "statusCode": 200,
        "body": {
            "body_type": type(event.body).__name__,
            "body": event.body.decode(),
            "content_type": event.headers["Content-Type"],
            "method": event.method,
            "path": event.path,
            "hostname": context.hostname,
        },
    }
"""
}


def test_python_template(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "of-hello", PY_TEMPLATE, {"interface": "openfaas"})
    response = fn.call("GET")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.text == "Hello from OpenFaaS!"


def test_python_http_functions(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "of-api", PY_API, {"interface": "openfaas"})
    echo = fn.call("POST", "/echo", content=b"raw text", headers={"content-type": "text/plain"})
    assert echo.status_code == 200
    assert echo.headers["content-type"] == "application/json"
    assert echo.json() == {
        "body_type": "bytes",
        "body": "raw text",
        "content_type": "text/plain",
        "method": "POST",
        "path": "/echo",
        # the template reads HOSTNAME (a pod sets it; the embedded sandbox does not)
        "hostname": "localhost",
    }
    created = fn.call("POST", "/items", json={"name": "pen"})
    assert (created.status_code, created.json()) == (201, {"id": 7, "name": "pen"})
    image = fn.call("GET", "/image")
    assert image.headers["content-type"] == "application/octet-stream"
    assert image.content == bytes([0, 1, 2, 255])
    login = fn.call("GET", "/login", headers={"x-api-key": "k1"})
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc", "theme=dark")
    assert login.headers["x-key-seen"] == "k1"
    assert login.text == "welcome"
    search = fn.call("GET", "/search?q=pens&tag=a&tag=b")
    assert search.json() == {"q": "pens", "tags": ["a", "b"]}
    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert "Internal Server Error" in boom.text
    assert "a bug" not in boom.text


#: the node20 template's handler.js
JS_TEMPLATE = {
    "handler.js": (
        "'use strict'\n\n"
        "module.exports = async (event, context) => {\n"
        "  const result = {\n"
        "    'body': JSON.stringify(event.body),\n"
        "    'content-type': event.headers[\"content-type\"]\n"
        "  }\n\n"
        "  return context\n"
        "    .status(200)\n"
        "    .succeed(result)\n"
        "}\n"
    )
}

JS_API = {
    "handler.js": r"""
'use strict'

module.exports = async (event, context, callback) => {
  if (event.path === '/items') {
    return context.status(201).headers({ 'Content-Type': 'application/json' })
      .succeed({ id: 7, ...event.body });
  }
  if (event.path === '/image') {
    return context.headers({ 'Content-Type': 'image/png' }).succeed(Buffer.from([0, 1, 2, 255]));
  }
  if (event.path === '/redirect') {
    return context.headers({ Location: '/new' }).status(307).succeed('Page has moved.');
  }
  if (event.path === '/search') {
    return { q: event.query.q, tags: event.query.tag, method: event.method };
  }
  if (event.path === '/missing') return context.status(404).fail('not here');
  if (event.path === '/failed') return context.fail('Unable to process this event.');
  if (event.path === '/callback') return callback(undefined, { result: 'message received' });
  throw new Error('a bug with a secret');
}
""",
}


def test_node_template(gateway: RunningGateway, acme: httpx.Client) -> None:
    spec = {"runtime": "nodejs20", "interface": "openfaas"}
    fn = deployed(gateway, acme, "of-node-hello", JS_TEMPLATE, spec)
    response = fn.call("POST", json={"a": 1})
    assert response.status_code == 200
    # the template sends JSON.stringify(result) through Express's send(): text/html
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.json() == {"body": '{"a":1}', "content-type": "application/json"}


def test_node_functions(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(
        gateway, acme, "of-node-api", JS_API, {"runtime": "nodejs20", "interface": "openfaas"}
    )
    created = fn.call("POST", "/items", json={"name": "pen"})
    assert (created.status_code, created.json()) == (201, {"id": 7, "name": "pen"})
    assert created.headers["content-type"] == "application/json"
    image = fn.call("GET", "/image")
    assert (image.headers["content-type"], image.content) == ("image/png", bytes([0, 1, 2, 255]))
    moved = fn.call("GET", "/redirect", follow_redirects=False)
    assert (moved.status_code, moved.headers["location"], moved.text) == (
        307,
        "/new",
        "Page has moved.",
    )
    search = fn.call("GET", "/search?q=pens&tag=a&tag=b")
    assert search.json() == {"q": "pens", "tags": ["a", "b"], "method": "GET"}
    missing = fn.call("GET", "/missing")
    assert (missing.status_code, missing.text) == (404, "not here")
    failed = fn.call("GET", "/failed")
    assert (failed.status_code, failed.text) == (500, "Unable to process this event.")
    assert fn.call("GET", "/callback").json() == {"result": "message received"}
    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert "secret" not in boom.text

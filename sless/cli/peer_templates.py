"""``sless new NAME --template lambda|openfaas|knative|asgi|wsgi``: a function written to a
peer's contract, laid out as the peer's own tooling lays it out, with the ``interface`` in
its ``sless.yaml`` (docs/migrating.md).

Each writes the handler, a ``sless.yaml``, a test the developer runs without sless and a
five-line README, as the other templates do (``scaffolding``). The handlers are written
here from the peers' documented contracts.
"""

from __future__ import annotations

from pathlib import Path

import click

#: the templates that pick a peer's interface
INTERFACE_TEMPLATES = ("lambda", "openfaas", "knative", "asgi", "wsgi")

#: (runtime, template) → {file: text}; NAME is replaced by the function's name
_FILES: dict[tuple[str, str], dict[str, str]] = {
    ("python3.11", "lambda"): {
        "lambda_function.py": '''import json


def lambda_handler(event, context):
    """API Gateway (HTTP API, payload 2.0): GET ?name=Ada answers {"message": "Hello, Ada!"}."""
    name = (event.get("queryStringParameters") or {}).get("name", "world")
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"message": f"Hello, {name}!", "function": context.function_name}),
    }
''',
        "test_lambda_function.py": '''"""The handler alone: `python test_lambda_function.py`."""

import json
from types import SimpleNamespace

from lambda_function import lambda_handler

CONTEXT = SimpleNamespace(function_name="NAME", aws_request_id="test")


def test_handler():
    answer = lambda_handler({"queryStringParameters": {"name": "Ada"}}, CONTEXT)
    assert json.loads(answer["body"]) == {"message": "Hello, Ada!", "function": "NAME"}


if __name__ == "__main__":
    test_handler()
    print("ok")
''',
    },
    ("nodejs20", "lambda"): {
        "index.js": """// API Gateway HTTP API: GET ?name=Ada answers {"message": "Hello, Ada!"}
exports.handler = async (event, context) => {
  const name = (event.queryStringParameters || {}).name || "world";
  return {
    statusCode: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: `Hello, ${name}!`, function: context.functionName }),
  };
};
""",
        "index.test.js": """// Run with `node --test`: the handler without sless.
const test = require("node:test");
const assert = require("node:assert");
const { handler } = require("./index.js");

test("handler", async () => {
  const event = { queryStringParameters: { name: "Ada" } };
  const answer = await handler(event, { functionName: "NAME" });
  assert.deepStrictEqual(JSON.parse(answer.body), { message: "Hello, Ada!", function: "NAME" });
});
""",
    },
    ("python3.11", "openfaas"): {
        "handler.py": '''def handle(event, context):
    """OpenFaaS python3-http: GET ?name=Ada answers {"message": "Hello, Ada!"}."""
    name = event.query.get("name", "world")
    return {"statusCode": 200, "body": {"message": f"Hello, {name}!"}}
''',
        "test_handler.py": '''"""Run with `python test_handler.py`: the handler without sless."""

from types import SimpleNamespace

from handler import handle


def test_handle():
    event = SimpleNamespace(query={"name": "Ada"}, body=b"", headers={}, method="GET", path="/")
    assert handle(event, SimpleNamespace(hostname="test"))["body"] == {"message": "Hello, Ada!"}


if __name__ == "__main__":
    test_handle()
    print("ok")
''',
    },
    ("nodejs20", "openfaas"): {
        "handler.js": """'use strict'

// OpenFaaS node20: GET ?name=Ada answers {"message": "Hello, Ada!"}
module.exports = async (event, context) => {
  const name = event.query.name || 'world'
  return context
    .status(200)
    .headers({ 'Content-Type': 'application/json' })
    .succeed({ message: `Hello, ${name}!` })
}
""",
        "handler.test.js": """// Run with `node --test`: the handler without sless.
const test = require("node:test");
const assert = require("node:assert");
const handler = require("./handler.js");

test("handler", async () => {
  let sent;
  const context = { status: () => context, headers: () => context, succeed: (v) => { sent = v; } };
  await handler({ query: { name: "Ada" } }, context);
  assert.deepStrictEqual(sent, { message: "Hello, Ada!" });
});
""",
    },
    ("python3.11", "knative"): {
        "function/__init__.py": "from .func import new\n",
        "function/func.py": '''import json


def new():
    """func's Python template: new() makes the function once per instance."""
    return Function()


class Function:
    def __init__(self):
        self.greeting = "Hello"

    async def handle(self, scope, receive, send):
        """ASGI: GET ?name=Ada answers {"message": "Hello, Ada!"}."""
        query = dict(p.split("=", 1) for p in scope["query_string"].decode().split("&") if "=" in p)
        body = json.dumps({"message": f"{self.greeting}, {query.get('name', 'world')}!"})
        await send({"type": "http.response.start", "status": 200,
                    "headers": [[b"content-type", b"application/json"]]})
        await send({"type": "http.response.body", "body": body.encode()})

    def start(self, cfg):
        self.greeting = cfg.get("GREETING", "Hello")

    def stop(self):
        pass

    def alive(self):
        return True, "Alive"

    def ready(self):
        return True, "Ready"
''',
        "test_func.py": '''"""Run with `python test_func.py`: the function without sless."""

import asyncio
import json

from function import new


def test_handle():
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "query_string": b"name=Ada"}
    asyncio.run(new().handle(scope, None, send))
    assert json.loads(sent[1]["body"]) == {"message": "Hello, Ada!"}


if __name__ == "__main__":
    test_handle()
    print("ok")
''',
    },
    ("nodejs20", "knative"): {
        "index.js": """// func's Node.js template: GET ?name=Ada answers {"message": "Hello, Ada!"}
const handle = async (context, body) => {
  const name = context.query.name || 'world';
  return { message: `Hello, ${name}!` };
};

module.exports = { handle };
""",
        "index.test.js": """// Run with `node --test`: the function without sless.
const test = require("node:test");
const assert = require("node:assert");
const { handle } = require("./index.js");

test("handle", async () => {
  assert.deepStrictEqual(await handle({ query: { name: "Ada" } }), { message: "Hello, Ada!" });
});
""",
    },
    ("python3.11", "asgi"): {
        "app.py": '''"""An ASGI app (FastAPI, Starlette... serve the same way): every path under the
function's URL reaches it; GET /hello?name=Ada answers {"message": "Hello, Ada!"}."""

import json
from urllib.parse import parse_qs


async def app(scope, receive, send):
    if scope["type"] == "lifespan":  # startup and shutdown: open and close what you need
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    name = parse_qs(scope["query_string"].decode()).get("name", ["world"])[0]
    status, answer = (200, {"message": f"Hello, {name}!"}) if scope["path"] == "/hello" else (
        404, {"detail": "Not Found"})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": json.dumps(answer).encode()})
''',
        "test_app.py": '''"""Run with `python test_app.py`: the app without sless."""

import asyncio
import json

from app import app


def test_hello():
    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "path": "/hello", "query_string": b"name=Ada"}
    asyncio.run(app(scope, None, send))
    assert json.loads(sent[1]["body"]) == {"message": "Hello, Ada!"}


if __name__ == "__main__":
    test_hello()
    print("ok")
''',
    },
    ("python3.11", "wsgi"): {
        "app.py": '''"""A WSGI app (Flask, Django... serve the same way): every path under the
function's URL reaches it; GET /hello?name=Ada answers {"message": "Hello, Ada!"}."""

import json
from urllib.parse import parse_qs


def app(environ, start_response):
    name = parse_qs(environ["QUERY_STRING"]).get("name", ["world"])[0]
    if environ["PATH_INFO"] == "/hello":
        status, answer = "200 OK", {"message": f"Hello, {name}!"}
    else:
        status, answer = "404 Not Found", {"detail": "Not Found"}
    start_response(status, [("Content-Type", "application/json")])
    return [json.dumps(answer).encode()]
''',
        "test_app.py": '''"""Run with `python test_app.py`: the app without sless."""

import json

from app import app


def test_hello():
    environ = {"PATH_INFO": "/hello", "QUERY_STRING": "name=Ada"}
    body = b"".join(app(environ, lambda status, headers: None))
    assert json.loads(body) == {"message": "Hello, Ada!"}


if __name__ == "__main__":
    test_hello()
    print("ok")
''',
    },
}

_ENTRYPOINTS = {
    ("python3.11", "lambda"): "lambda_function.lambda_handler",
    ("nodejs20", "lambda"): "index.handler",
    ("python3.11", "openfaas"): "handler.handle",
    ("nodejs20", "openfaas"): "handler.handle",
    ("python3.11", "knative"): "function.func.new",
    ("nodejs20", "knative"): "index.handle",
    ("python3.11", "asgi"): "app.app",
    ("python3.11", "wsgi"): "app.app",
}

_PEERS = {
    "lambda": "An AWS Lambda handler (API Gateway HTTP API events)",
    "openfaas": "An OpenFaaS function (python3-http / node20 template)",
    "knative": "A Knative func function",
    "asgi": "An ASGI app",
    "wsgi": "A WSGI app",
}


def files(name: str, runtime: str, template: str) -> dict[str, str]:
    """The files of ``template`` for ``runtime``, NAME not yet replaced."""
    if (runtime, template) not in _FILES:
        raise click.ClickException(f"the {template} template is for python3.11 only")
    python = runtime == "python3.11"
    path = "/hello?name=Ada" if template in ("asgi", "wsgi") else "?name=Ada"
    tests = [f for f in _FILES[runtime, template] if f.startswith("test_")]
    test = f"python {tests[0]}" if python else "node --test"
    return {
        **_FILES[runtime, template],
        "sless.yaml": (
            "# the function spec (README: 'Writing a function'); sless deploy's options win\n"
            f"name: NAME\nruntime: {runtime}\ninterface: {template}"
            "              # docs/migrating.md\n"
            f"entrypoint: {_ENTRYPOINTS[runtime, template]}\nmemory_mb: 128\ntimeout_s: 10\n"
            "auth: public\negress: []                 # host:port allowed out; empty: no network\n"
        ),
        "README.md": (
            f"# NAME\n\n{_PEERS[template]} ({runtime}), from `sless new --template {template}`.\n"
            f"Test it: `{test}`. Deploy it from this folder:"
            " `sless deploy`.\n"
            f"Call it: curl the URL `sless deploy` prints, with `{path}`.\n"
        ),
    }


def write(directory: Path, name: str, runtime: str, template: str) -> list[Path]:
    """Write the template's files into ``directory`` (new or empty); the paths written."""
    if directory.exists() and any(directory.iterdir()):
        raise click.ClickException(f"{directory} exists and is not empty")
    texts = files(name, runtime, template)
    written = []
    for filename, text in texts.items():
        path = directory / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.replace("NAME", name))
        written.append(path)
    return written

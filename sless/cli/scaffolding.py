"""``sless new NAME``: a working function to start from, in a new folder.

Each template writes a handler, a ``sless.yaml``, a test the developer runs without
sless (``python test_handler.py``, ``node --test``) and a five-line README saying how to
deploy and call it. ``tests/e2e/test_new_templates.py`` deploys every one of them and
calls it as its README says.
"""

from __future__ import annotations

from pathlib import Path

import click

RUNTIMES = ("python3.11", "nodejs20")
TEMPLATES = ("http", "cron", "rabbitmq", "async")

_PY_HANDLER = {
    "http": '''def handle(event, context):
    """GET ?name=Ada answers {"message": "Hello, Ada!"}."""
    name = event["query"].get("name", "world")
    return {"message": f"Hello, {name}!", "function": context.function}
''',
    "cron": '''def handle(event, context):
    """Called by the cron trigger of sless.yaml with its payload as the body."""
    body = event["body"] if isinstance(event["body"], dict) else {}
    print(f"tick {body.get('job', '?')} ({context.invocation_id})")
    return {"ticked": body.get("job", "manual")}
''',
    "rabbitmq": '''def handle(event, context):
    """Called once per message of the queue named in sless.yaml (JSON or text body)."""
    print(f"message {event['body']!r} ({context.invocation_id})")
    return {"received": event["body"]}
''',
    "async": '''import time


def handle(event, context):
    """Slow work: call it with `sless invoke NAME --async` and read the result later."""
    seconds = min(float((event["body"] or {}).get("seconds", 1)), 10)
    time.sleep(seconds)
    return {"slept": seconds}
''',
}

_JS_HANDLER = {
    "http": """exports.handle = async (event, context) => {
  // GET ?name=Ada answers {"message": "Hello, Ada!"}
  const name = event.query.name || "world";
  return { message: `Hello, ${name}!`, function: context.function };
};
""",
    "cron": """exports.handle = async (event, context) => {
  // called by the cron trigger of sless.yaml with its payload as the body
  const body = event.body && typeof event.body === "object" ? event.body : {};
  console.log(`tick ${body.job || "?"} (${context.invocation_id})`);
  return { ticked: body.job || "manual" };
};
""",
    "rabbitmq": """exports.handle = async (event, context) => {
  // called once per message of the queue named in sless.yaml (JSON or text body)
  console.log(`message ${JSON.stringify(event.body)} (${context.invocation_id})`);
  return { received: event.body };
};
""",
    "async": """exports.handle = async (event, context) => {
  // slow work: call it with `sless invoke NAME --async` and read the result later
  const seconds = Math.min(Number((event.body || {}).seconds ?? 1), 10);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return { slept: seconds };
};
""",
}

#: (the event the test sends, the answer it expects), per template
_CASES = {
    "http": (
        '{"method": "GET", "path": "/", "query": {"name": "Ada"}, "headers": {}, "body": ""}',
        '{"message": "Hello, Ada!", "function": "NAME"}',
    ),
    "cron": (
        '{"method": "POST", "path": "/", "query": {}, "headers": {}, "body": {"job": "t"}}',
        '{"ticked": "t"}',
    ),
    "rabbitmq": (
        '{"method": "POST", "path": "/", "query": {}, "headers": {}, "body": {"n": 1}}',
        '{"received": {"n": 1}}',
    ),
    "async": (
        '{"method": "POST", "path": "/", "query": {}, "headers": {}, "body": {"seconds": 0}}',
        '{"slept": 0}',
    ),
}

_PY_TEST = '''"""Run with `python test_handler.py` (or pytest): the handler without sless."""

import json
from types import SimpleNamespace

from handler import handle

CONTEXT = SimpleNamespace(function="NAME", namespace="local", invocation_id="test", deadline=0)


def test_handle():
    assert handle(json.loads(\'\'\'EVENT\'\'\'), CONTEXT) == json.loads(\'\'\'ANSWER\'\'\')


if __name__ == "__main__":
    test_handle()
    print("ok")
'''

_JS_TEST = """// Run with `node --test`: the handler without sless.
const test = require("node:test");
const assert = require("node:assert");
const { handle } = require("./handler.js");

const context = { function: "NAME", namespace: "local", invocation_id: "test", deadline: 0 };

test("handle", async () => {
  assert.deepStrictEqual(await handle(EVENT, context), ANSWER);
});
"""

_TRIGGERS = {
    "http": "",
    "cron": """triggers:
  - name: NAME-tick
    type: cron
    schedule: "*/5 * * * *"   # every five minutes, UTC
    payload: {"job": "tick"}
""",
    "rabbitmq": """triggers:
  - name: NAME-queue
    type: rabbitmq
    url_secret: NAME-mq       # sless secret put NAME-mq (the amqp:// URL), before deploying
    queue: NAME
""",
    "async": "",
}

_README = {
    "http": "Call it: `sless invoke NAME`, or curl the URL it prints with `?name=Ada`.",
    "cron": "sless.yaml's trigger calls it every five minutes; `sless logs NAME` shows it.",
    "rabbitmq": "First `sless secret put NAME-mq` (the amqp:// URL); each message calls it.",
    "async": "Call it: `sless invoke NAME --async --wait --data '{\"seconds\": 2}'`.",
}


def write(directory: Path, name: str, runtime: str, template: str) -> list[Path]:
    """Write the template's files into ``directory`` (new or empty); the paths written."""
    if directory.exists() and any(directory.iterdir()):
        raise click.ClickException(f"{directory} exists and is not empty")
    python = runtime == "python3.11"
    event, answer = _CASES[template]
    test = (_PY_TEST if python else _JS_TEST).replace("EVENT", event).replace("ANSWER", answer)
    files = {
        "handler.py" if python else "handler.js": (_PY_HANDLER if python else _JS_HANDLER)[
            template
        ],
        "test_handler.py" if python else "handler.test.js": test,
        "sless.yaml": (
            "# the function spec (README: 'Writing a function'); sless deploy's options win\n"
            f"name: NAME\nruntime: {runtime}\nentrypoint: handler.handle\nmemory_mb: 128\n"
            f"timeout_s: {30 if template == 'async' else 10}\nauth: public\n"
            f"egress: []                 # host:port allowed out; empty: no network\n"
            + _TRIGGERS[template]
        ),
        "README.md": (
            f"# NAME\n\nA {runtime} function from the `{template}` template of `sless new`.\n"
            f"Test it: `{'python test_handler.py' if python else 'node --test'}`."
            " Deploy it from this folder: `sless deploy`.\n"
            f"{_README[template]}\n"
        ),
    }
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, text in files.items():
        path = directory / filename
        path.write_text(text.replace("NAME", name))
        written.append(path)
    return written

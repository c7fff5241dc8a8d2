"""AWS Lambda handlers behind API Gateway, unmodified (``interface: lambda``).

The expected answers are API Gateway's documented ones ("Working with AWS Lambda proxy
integrations for HTTP APIs", payload format 2.0 and 1.0; "Define Lambda function handler in
Python / Node.js"): the event's fields, the 2.0 rule that a value without ``statusCode`` is
sent as JSON with 200, ``cookies`` as Set-Cookie, base64 bodies, 500 ``Internal Server
Error`` when the function raises (2.0), 502 for a malformed proxy answer (1.0).
"""

from __future__ import annotations

import base64

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.interfaces.conftest import deployed
from tests.support import wait_for

pytestmark = pytest.mark.integration

#: the AWS console's Python template, as written for Lambda
PY_TEMPLATE = {
    "lambda_function.py": (
        "import json\n\n"
        "def lambda_handler(event, context):\n"
        "    return {\n"
        "        'statusCode': 200,\n"
        "        'body': json.dumps('Hello from Lambda!')\n"
        "    }\n"
    )
}

#: typical HTTP API functions: a JSON API, a binary answer, headers and cookies, query
#: strings, an error
PY_API = {
    "lambda_function.py": """
import base64
import json

PNG = bytes([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 255])


def lambda_handler(event, context):
    path = event["rawPath"]
    if path == "/items" and event["requestContext"]["http"]["method"] == "POST":
        item = json.loads(event["body"])
        return {
            "statusCode": 201,
            "headers": {"Content-Type": "application/json", "Location": "/items/7"},
            "body": json.dumps({"id": 7, **item}),
        }
    if path == "/image":
        return {
            "statusCode": 200,
            "headers": {"Content-Type": "image/png"},
            "body": base64.b64encode(PNG).decode(),
            "isBase64Encoded": True,
        }
    if path == "/login":
        return {
            "statusCode": 204,
            "headers": {"X-Seen-Cookies": str(len(event.get("cookies", [])))},
            "cookies": ["session=abc; HttpOnly", "theme=dark"],
        }
    if path == "/plain":
        return {"sum": sum(int(v) for v in event["queryStringParameters"]["n"].split(","))}
    if path == "/boom":
        raise RuntimeError("a bug")
    return {
        "event": event,
        "context": {
            "aws_request_id": context.aws_request_id,
            "function_name": context.function_name,
            "function_version": context.function_version,
            "memory_limit_in_mb": context.memory_limit_in_mb,
            "log_group_name": context.log_group_name,
            "remaining": context.get_remaining_time_in_millis(),
        },
    }
"""
}


def test_python_template_answers_as_api_gateway(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    fn = deployed(gateway, acme, "aws-hello", PY_TEMPLATE, {"interface": "lambda"})
    response = fn.call("GET")
    assert response.status_code == 200
    # no content-type from the function: HTTP API answers application/json
    assert response.headers["content-type"] == "application/json"
    assert response.text == '"Hello from Lambda!"'


def test_python_http_api_event_and_responses(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(gateway, acme, "aws-api", PY_API, {"interface": "lambda", "memory_mb": 256})

    echo = fn.call(
        "PUT",
        "/a%20b/c?x=1&x=2&y=",
        content=b"\x00\xff binary",
        headers={"Cookie": "a=1; b=2", "X-Trace": "t1", "Content-Type": "application/octet-stream"},
    )
    assert echo.status_code == 200
    event, context = echo.json()["event"], echo.json()["context"]
    assert event["version"] == "2.0"
    assert event["routeKey"] == "$default"
    assert event["rawPath"] == "/a%20b/c"
    assert event["rawQueryString"] == "x=1&x=2&y="
    # 2.0 joins repeated parameters with commas
    assert event["queryStringParameters"] == {"x": "1,2", "y": ""}
    assert event["cookies"] == ["a=1", "b=2"]
    assert "cookie" not in event["headers"]
    assert event["headers"]["x-trace"] == "t1"
    assert not any(name.startswith("x-sless-") for name in event["headers"])
    assert event["requestContext"]["http"]["method"] == "PUT"
    assert event["requestContext"]["http"]["path"] == "/a b/c"
    assert event["requestContext"]["requestId"] == echo.headers["x-sless-invocation-id"]
    assert isinstance(event["requestContext"]["timeEpoch"], int)
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\x00\xff binary"
    assert context["aws_request_id"] == echo.headers["x-sless-invocation-id"]
    assert context["function_name"] == "aws-api"
    assert context["function_version"] == "$LATEST"
    assert context["memory_limit_in_mb"] == "256"
    assert context["log_group_name"] == "/aws/lambda/aws-api"
    assert 0 < context["remaining"] <= 30_000

    created = fn.call("POST", "/items", json={"name": "pen"})
    assert created.status_code == 201
    assert created.headers["location"] == "/items/7"
    assert created.json() == {"id": 7, "name": "pen"}

    image = fn.call("GET", "/image")
    assert image.headers["content-type"] == "image/png"
    assert image.content == bytes([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 255])

    login = fn.call("POST", "/login", headers={"Cookie": "old=1"})
    assert login.status_code == 204
    assert login.headers["x-seen-cookies"] == "1"
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc; HttpOnly", "theme=dark")

    plain = fn.call("GET", "/plain?n=1&n=2&n=39")
    assert plain.status_code == 200
    assert plain.headers["content-type"] == "application/json"
    assert plain.json() == {"sum": 42}

    boom = fn.call("GET", "/boom")
    assert boom.status_code == 500
    assert boom.json() == {"message": "Internal Server Error"}
    logs = acme.get("/v1/namespaces/sless-acme/functions/aws-api/logs").text
    assert "RuntimeError: a bug" in logs


#: a REST API (payload 1.0) function: multi-value fields, and a malformed answer
PY_REST = {
    "handler.py": """
import json


def handler(event, context):
    if event["path"] == "/malformed":
        return {"body": "no status"}
    return {
        "statusCode": 200,
        "multiValueHeaders": {"X-Many": ["1", "2"]},
        "body": json.dumps({k: event[k] for k in (
            "resource", "path", "httpMethod", "queryStringParameters",
            "multiValueQueryStringParameters", "pathParameters", "body", "isBase64Encoded")}
            | {"multi_trace": event["multiValueHeaders"]["x-trace"],
               "method": event["requestContext"]["httpMethod"]}),
    }
"""
}


def test_python_rest_proxy_event(gateway: RunningGateway, acme: httpx.Client) -> None:
    spec = {"interface": "lambda", "payload_format_version": "1.0", "entrypoint": "handler.handler"}
    fn = deployed(gateway, acme, "aws-rest", PY_REST, spec)
    response = fn.call(
        "POST", "/orders/9?tag=a&tag=b", content="hi", headers=[("X-Trace", "1"), ("X-Trace", "2")]
    )
    assert response.status_code == 200
    assert response.headers.get_list("x-many") == ["1", "2"]
    assert response.json() == {
        "resource": "/{proxy+}",
        "path": "/orders/9",
        "httpMethod": "POST",
        "queryStringParameters": {"tag": "b"},
        "multiValueQueryStringParameters": {"tag": ["a", "b"]},
        "pathParameters": {"proxy": "orders/9"},
        "body": "hi",
        "isBase64Encoded": False,
        "multi_trace": ["1", "2"],
        "method": "POST",
    }
    malformed = fn.call("GET", "/malformed")
    assert malformed.status_code == 502
    assert malformed.json() == {"message": "Internal server error"}


#: the AWS console's Node.js template, an async handler
JS_TEMPLATE = {
    "index.mjs": (
        "export const handler = async (event) => {\n"
        "  const response = {\n"
        "    statusCode: 200,\n"
        "    body: JSON.stringify('Hello from Lambda!'),\n"
        "  };\n"
        "  return response;\n"
        "};\n"
    )
}

#: the callback style, and the typical functions
JS_API = {
    "index.js": r"""
exports.handler = (event, context, callback) => {
  const path = event.rawPath;
  if (path === '/items') {
    const item = JSON.parse(event.body);
    return callback(null, { statusCode: 201, headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 7, ...item }) });
  }
  if (path === '/image') {
    return callback(null, { statusCode: 200, headers: { 'content-type': 'image/png' },
      body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]).toString('base64'),
      isBase64Encoded: true });
  }
  if (path === '/login') {
    return callback(null, { statusCode: 204, cookies: ['session=abc; HttpOnly', 'theme=dark'],
      headers: { 'x-seen-cookies': String((event.cookies || []).length) } });
  }
  if (path === '/plain') {
    const n = event.queryStringParameters.n.split(',');
    return callback(null, { sum: n.reduce((a, b) => a + Number(b), 0) });
  }
  if (path === '/boom') return callback(new Error('a bug'));
  if (path === '/legacy') return context.succeed({ legacy: true });
  callback(null, { event, context: { awsRequestId: context.awsRequestId,
    functionName: context.functionName, memoryLimitInMB: context.memoryLimitInMB,
    remaining: context.getRemainingTimeInMillis() } });
};
""",
}


def test_node_template_answers_as_api_gateway(gateway: RunningGateway, acme: httpx.Client) -> None:
    spec = {"runtime": "nodejs20", "interface": "lambda", "entrypoint": "index.handler"}
    fn = deployed(gateway, acme, "aws-node-hello", JS_TEMPLATE, spec)
    response = fn.call("GET")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.text == '"Hello from Lambda!"'


def test_node_callback_handler(gateway: RunningGateway, acme: httpx.Client) -> None:
    fn = deployed(
        gateway, acme, "aws-node-api", JS_API, {"runtime": "nodejs20", "interface": "lambda"}
    )
    echo = fn.call("GET", "/x?q=1&q=2", headers={"Cookie": "a=1"})
    body = echo.json()
    assert body["event"]["queryStringParameters"] == {"q": "1,2"}
    assert body["event"]["cookies"] == ["a=1"]
    assert body["event"]["requestContext"]["http"]["method"] == "GET"
    assert body["context"]["awsRequestId"] == echo.headers["x-sless-invocation-id"]
    assert body["context"]["functionName"] == "aws-node-api"
    assert body["context"]["memoryLimitInMB"] == "128"
    assert body["context"]["remaining"] > 0

    created = fn.call("POST", "/items", json={"name": "pen"})
    assert (created.status_code, created.json()) == (201, {"id": 7, "name": "pen"})
    image = fn.call("GET", "/image")
    assert image.content == bytes([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 255])
    assert image.headers["content-type"] == "image/png"
    login = fn.call("POST", "/login", headers={"Cookie": "old=1"})
    assert login.status_code == 204
    assert login.headers.get_list("set-cookie") == fn.scoped("session=abc; HttpOnly", "theme=dark")
    assert login.headers["x-seen-cookies"] == "1"
    assert fn.call("GET", "/plain?n=1&n=2&n=39").json() == {"sum": 42}
    assert fn.call("GET", "/legacy").json() == {"legacy": True}
    boom = fn.call("GET", "/boom")
    assert (boom.status_code, boom.json()) == (500, {"message": "Internal Server Error"})


#: a function a job (an async invoke) and a cron tick call: the event is what Lambda hands
PY_EVENTS = {
    "lambda_function.py": (
        "def lambda_handler(event, context):\n"
        "    print('EVENT', repr(event))\n"
        "    return {'got': event}\n"
    )
}


def test_job_delivers_the_payload_as_an_async_invoke(
    gateway: RunningGateway, acme: httpx.Client
) -> None:
    deployed(gateway, acme, "aws-events", PY_EVENTS, {"interface": "lambda"})
    response = acme.put(
        "/v1/namespaces/sless-acme/jobs/nightly",
        json={"function": "aws-events", "run_id": 1, "payload": {"order": 7}},
    )
    assert response.status_code in (200, 201), response.text

    def logged() -> bool:
        logs = acme.get("/v1/namespaces/sless-acme/functions/aws-events/logs").text
        return "EVENT {'order': 7}" in logs

    wait_for("the job's call", logged, timeout=60)

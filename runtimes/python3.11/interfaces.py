"""Handler adapters of the Python runtime server: the peers' contracts over sless's request.

``server.py`` loads this file only when ``SLESS_INTERFACE`` names an interface other than
``sless`` (the default path imports nothing more). Each adapter turns one request of the
gateway into what the peer's platform would hand the tenant's code, and the code's answer
into the response the peer would send (their documentation is the reference; see
docs/migrating.md):

- ``lambda``: AWS Lambda behind API Gateway (HTTP API payload 2.0, or REST proxy 1.0), a
  cron tick as EventBridge's Scheduled Event, a job or queue message as an async invoke's
  payload; the Lambda context object.
- ``openfaas``: the ``python3-http`` template's ``handle(event, context)``.
- ``knative``: ``func``'s Python template: ``new()`` returns an object whose ``handle`` is an
  ASGI callable, with ``start``/``stop`` and ``alive``/``ready`` hooks.
- ``asgi`` / ``wsgi``: a module-level app, every path under the function routed to it,
  ASGI lifespan events honoured.

Security: an adapter runs inside the function's sandbox, in the handler's own process, with
nothing the handler does not have already. Whatever the code answers goes through the
server's one header check (``server.checked_headers``: no response splitting, no hop-by-hop
or ``X-Sless-*`` field), and ``X-Sless-*`` request fields never reach the code.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time

Any = object  # annotations only


class Call:
    """One request as the adapters see it: the parsed target, headers and body."""

    def __init__(self, request: Any, invocation_id: str, deadline: float) -> None:
        target = request.target
        if not target.startswith("/"):
            from urllib.parse import urlsplit

            parts = urlsplit(target)
            target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        raw_path, _, self.query_string = target.partition("?")
        from urllib.parse import parse_qsl, unquote

        self.raw_path = raw_path or "/"
        self.path = unquote(self.raw_path)
        if not self.path.startswith("/"):
            self.path = "/" + self.path
        self.query_pairs = parse_qsl(self.query_string, keep_blank_values=True)
        self.method = request.method
        self.header_pairs = [(n, v) for n, v in request.headers if not n.startswith("x-sless-")]
        self.body: bytes = request.body
        self.invocation_id = invocation_id
        self.deadline = deadline
        values = dict(request.headers)
        #: a cron tick (``sless-tick``) or a trigger's or job's call (``sless-trigger``):
        #: headers only the platform can set (the gateway drops them from callers)
        self.tick = values.get("sless-tick")
        self.trigger = values.get("sless-trigger")

    def joined_headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, value in self.header_pairs:
            out[name] = f"{out[name]}, {value}" if name in out else value
        return out

    def text_or_base64(self) -> tuple[str | None, bool]:
        if not self.body:
            return None, False
        try:
            return self.body.decode("utf-8"), False
        except UnicodeDecodeError:
            return base64.b64encode(self.body).decode("ascii"), True


class Response:
    """What an adapter answers: status, header pairs (a field may repeat), body bytes."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _status(value: Any, server: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 100 <= value <= 599:
        raise server.HandlerResultError(f"statusCode must be an integer 100-599, got {value!r}")
    return value


# --------------------------------------------------------------------------- lambda


class LambdaContext:
    """The context object of AWS Lambda's Python runtime (the documented attributes)."""

    def __init__(self, config: Any, call: Call) -> None:
        self.function_name = config.function
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:sless:lambda:{config.namespace}:function:{config.function}"
        # the Python runtime reads it from AWS_LAMBDA_FUNCTION_MEMORY_SIZE: a string
        self.memory_limit_in_mb = os.environ.get("SLESS_MEMORY_MB", "128")
        self.aws_request_id = call.invocation_id
        self.log_group_name = f"/aws/lambda/{config.function}"
        self.log_stream_name = f"{config.namespace}/{config.function}"
        self.identity = None
        self.client_context = None
        self._deadline = call.deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.time()) * 1000))


def _request_time(now: float) -> str:
    return time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now))


def lambda_event_v2(call: Call, config: Any) -> dict[str, Any]:
    now = time.time()
    headers = call.joined_headers()
    cookie = headers.pop("cookie", None)
    body, is_b64 = call.text_or_base64()
    query: dict[str, str] = {}
    for key, value in call.query_pairs:
        query[key] = f"{query[key]},{value}" if key in query else value
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": call.raw_path,
        "rawQueryString": call.query_string,
        "headers": headers,
        "requestContext": {
            "accountId": "anonymous",
            "apiId": config.namespace,
            "domainName": headers.get("host", ""),
            "domainPrefix": headers.get("host", "").split(".", 1)[0],
            "http": {
                "method": call.method,
                "path": call.path,
                "protocol": "HTTP/1.1",
                "sourceIp": headers.get("x-forwarded-for", "").split(",", 1)[0].strip(),
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": call.invocation_id,
            "routeKey": "$default",
            "stage": "$default",
            "time": _request_time(now),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": is_b64,
    }
    if cookie:
        event["cookies"] = [part.strip() for part in cookie.split(";") if part.strip()]
    if query:
        event["queryStringParameters"] = query
    if body is not None:
        event["body"] = body
    return event


def lambda_event_v1(call: Call, config: Any) -> dict[str, Any]:
    now = time.time()
    headers: dict[str, str] = {}
    multi_headers: dict[str, list[str]] = {}
    for name, value in call.header_pairs:
        headers[name] = value
        multi_headers.setdefault(name, []).append(value)
    query: dict[str, str] = {}
    multi_query: dict[str, list[str]] = {}
    for key, value in call.query_pairs:
        query[key] = value
        multi_query.setdefault(key, []).append(value)
    body, is_b64 = call.text_or_base64()
    return {
        "resource": "/{proxy+}",
        "path": call.path,
        "httpMethod": call.method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": {"proxy": call.path.lstrip("/")} if call.path != "/" else None,
        "stageVariables": None,
        "requestContext": {
            "accountId": "anonymous",
            "apiId": config.namespace,
            "httpMethod": call.method,
            "identity": {
                "sourceIp": headers.get("x-forwarded-for", "").split(",", 1)[0].strip(),
                "userAgent": headers.get("user-agent", ""),
            },
            "path": call.path,
            "protocol": "HTTP/1.1",
            "requestId": call.invocation_id,
            "requestTime": _request_time(now),
            "requestTimeEpoch": int(now * 1000),
            "resourcePath": "/{proxy+}",
            "stage": "$default",
        },
        "body": body,
        "isBase64Encoded": is_b64,
    }


def lambda_trigger_event(call: Call, config: Any) -> Any:
    """A cron tick without a payload is EventBridge's Scheduled Event; a tick with one is
    that payload (EventBridge's "constant input"), as a job or a queue message is (the
    payload of an asynchronous invoke)."""
    try:
        payload = json.loads(call.body) if call.body else None
    except ValueError:
        payload = call.body.decode("utf-8", "replace")
    if call.tick is not None and payload is None:
        return {
            "version": "0",
            "id": call.invocation_id,
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": "anonymous",
            "time": call.tick[:19] + "Z" if call.tick.endswith("+00:00") else call.tick,
            "region": config.namespace,
            "resources": [f"arn:sless:events:{config.namespace}:rule/{call.trigger}"],
            "detail": {},
        }
    return payload


class LambdaAdapter:
    """``handler(event, context)``: sync or async; its answer mapped as API Gateway does."""

    def __init__(self, server: Any, config: Any, func: Any) -> None:
        self.server = server
        self.config = config
        self.func = func
        self.v1 = os.environ.get("SLESS_PAYLOAD_FORMAT_VERSION") == "1.0"

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def __call__(self, call: Call, run: Any) -> Response:
        if call.trigger is not None:
            result = await run(self.func, lambda_trigger_event(call, self.config), LambdaContext(self.config, call))
            return Response(200, [("content-type", "application/json")], _json(result))
        build = lambda_event_v1 if self.v1 else lambda_event_v2
        event = build(call, self.config)
        try:
            result = await run(self.func, event, LambdaContext(self.config, call))
        except Exception as exc:
            self.server.log_exception(call.invocation_id, exc)
            return self.failed()
        try:
            return self.response(result)
        except self.server.HandlerResultError as exc:
            self.server.log_exception(call.invocation_id, exc)
            return self.malformed()

    def failed(self) -> Response:
        # what API Gateway answers when the function raised
        if self.v1:
            return self.malformed()
        return Response(500, [("content-type", "application/json")], b'{"message":"Internal Server Error"}')

    def malformed(self) -> Response:
        return Response(502, [("content-type", "application/json")], b'{"message":"Internal server error"}')

    def response(self, result: Any) -> Response:
        server = self.server
        if not (isinstance(result, dict) and "statusCode" in result):
            if self.v1:
                raise server.HandlerResultError("a REST proxy answer needs statusCode")
            # HTTP API (2.0) infers a response from any other JSON value
            body = result.encode("utf-8") if isinstance(result, str) else _json(result)
            return Response(200, [("content-type", "application/json")], body)
        status = _status(result["statusCode"], server)
        pairs: list[tuple[str, str]] = []
        single = result.get("headers") or {}
        multi = result.get("multiValueHeaders") or {}
        if not isinstance(single, dict) or not isinstance(multi, dict):
            raise server.HandlerResultError("headers must be a dict")
        for name, values in multi.items():
            if not isinstance(values, list):
                raise server.HandlerResultError("multiValueHeaders values must be lists")
            pairs += [(str(name), str(v)) for v in values]
        taken = {name.lower() for name, _ in pairs}
        pairs += [(str(n), str(v)) for n, v in single.items() if str(n).lower() not in taken]
        cookies = result.get("cookies") or []
        if not isinstance(cookies, list):
            raise server.HandlerResultError("cookies must be a list")
        pairs += [("set-cookie", str(c)) for c in cookies]
        body = result.get("body")
        if body is None:
            payload = b""
        elif not isinstance(body, str):
            raise server.HandlerResultError("body must be a string")
        elif result.get("isBase64Encoded"):
            try:
                payload = base64.b64decode(body, validate=True)
            except ValueError as e:
                raise server.HandlerResultError("body is not valid base64") from e
        else:
            payload = body.encode("utf-8")
        headers = server.checked_headers(pairs)
        if not any(name == "content-type" for name, _ in headers) and not self.v1:
            headers.append(("content-type", "application/json"))
        return Response(status, headers, payload)


# --------------------------------------------------------------------------- openfaas


class Headers(dict):
    """Request headers that answer whatever the case asked (werkzeug's ``EnvironHeaders``
    is what the template hands over)."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


class Query(dict):
    """``request.args``: the first value of a name, ``getlist`` for all of them."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__()
        self._lists: dict[str, list[str]] = {}
        for key, value in pairs:
            self._lists.setdefault(key, []).append(value)
            self.setdefault(key, value)

    def getlist(self, key: str) -> list[str]:
        return list(self._lists.get(key, []))


class OpenFaaSEvent:
    def __init__(self, call: Call) -> None:
        self.body = call.body
        self.headers = Headers(call.joined_headers())
        self.method = call.method
        self.query = Query(call.query_pairs)
        self.path = call.path


class OpenFaaSContext:
    def __init__(self) -> None:
        self.hostname = os.environ.get("HOSTNAME", "localhost")


_FLASK_500 = (
    b"<!doctype html>\n<html lang=en>\n<title>500 Internal Server Error</title>\n"
    b"<h1>Internal Server Error</h1>\n<p>The server encountered an internal error and was "
    b"unable to complete your request. Either the server is overloaded or there is an error "
    b"in the application.</p>\n"
)


class OpenFaaSAdapter:
    """``handle(event, context)`` of ``python3-http``, answered as its Flask server does."""

    def __init__(self, server: Any, config: Any, func: Any) -> None:
        self.server = server
        self.func = func

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def __call__(self, call: Call, run: Any) -> Response:
        try:
            result = await run(self.func, OpenFaaSEvent(call), OpenFaaSContext())
            return self.response(result)
        except Exception as exc:
            self.server.log_exception(call.invocation_id, exc)
            return Response(500, [("content-type", "text/html; charset=utf-8")], _FLASK_500)

    def response(self, result: Any) -> Response:
        server = self.server
        if result is None:
            return Response(200, [("content-type", "text/html; charset=utf-8")], b"")
        if not isinstance(result, dict):
            raise server.HandlerResultError("the handler must return a dict (or None)")
        status = _status(result.get("statusCode", 200), server)
        raw = result.get("headers") or {}
        pairs = [(str(k), str(v)) for k, v in (raw.items() if isinstance(raw, dict) else raw)]
        headers = server.checked_headers(pairs)
        content_type = raw.get("Content-type", "") if isinstance(raw, dict) else ""
        body = result.get("body")
        if content_type == "application/octet-stream" and isinstance(body, (bytes, bytearray)):
            payload = bytes(body)
        elif body is None:
            payload = b""
        elif isinstance(body, dict):
            payload = json.dumps(body).encode("utf-8") + b"\n"  # Flask's jsonify
            if not any(n == "content-type" for n, _ in headers):
                headers.append(("content-type", "application/json"))
        elif isinstance(body, (bytes, bytearray)):
            payload = bytes(body)
        else:
            payload = str(body).encode("utf-8")
        if not any(n == "content-type" for n, _ in headers):
            headers.append(("content-type", "text/html; charset=utf-8"))
        return Response(status, headers, payload)


# --------------------------------------------------------------------------- ASGI


class AsgiAdapter:
    """One ASGI 3 application: an HTTP scope per call, the lifespan protocol around the
    server's life (a failed startup stops the worker before it serves)."""

    def __init__(self, server: Any, config: Any, app: Any) -> None:
        self.server = server
        self.app = app
        self.state: dict[str, Any] = {}
        self._lifespan: asyncio.Task | None = None
        self._to_app: asyncio.Queue = asyncio.Queue()
        self._from_app: asyncio.Queue = asyncio.Queue()

    async def start(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self.state}

        async def run() -> None:
            try:
                await self.app(scope, self._to_app.get, self._from_app.put)
            except BaseException as exc:  # an app without lifespan support raises here
                await self._from_app.put({"type": "_ended", "error": exc})
                return
            await self._from_app.put({"type": "_ended", "error": None})

        self._lifespan = asyncio.get_running_loop().create_task(run())
        await self._to_app.put({"type": "lifespan.startup"})
        message = await self._from_app.get()
        if message["type"] == "lifespan.startup.failed":
            raise RuntimeError(f"lifespan startup failed: {message.get('message', '')}"[:300])
        if message["type"] == "_ended":
            # the spec: an app that raises on a lifespan scope does not support it
            self._lifespan = None

    async def stop(self) -> None:
        if self._lifespan is None:
            return
        await self._to_app.put({"type": "lifespan.shutdown"})
        try:
            await asyncio.wait_for(self._from_app.get(), 10)
        except TimeoutError:
            self._lifespan.cancel()

    def scope(self, call: Call) -> dict[str, Any]:
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": call.method,
            "scheme": "http",
            "path": call.path,
            "raw_path": call.raw_path.encode("latin-1", "replace"),
            "query_string": call.query_string.encode("latin-1", "replace"),
            "root_path": "",
            "headers": [(n.encode("latin-1"), v.encode("latin-1")) for n, v in call.header_pairs],
            "client": None,
            "server": None,
            "state": dict(self.state),
        }

    async def __call__(self, call: Call, run: Any) -> Response:
        return await self.serve(self.app, self.scope(call), call)

    async def serve(self, app: Any, scope: dict[str, Any], call: Call) -> Response:
        server = self.server
        sent = asyncio.Event()
        received = False
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal received
            if not received:
                received = True
                return {"type": "http.request", "body": call.body, "more_body": False}
            await sent.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and not start:
                start.update(message)
            elif message["type"] == "http.response.body" and start and not sent.is_set():
                chunks.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    sent.set()

        try:
            await app(scope, receive, send)
        except Exception as exc:
            server.log_exception(call.invocation_id, exc)
            if not start:
                return Response(500, [("content-type", "text/plain; charset=utf-8")], b"Internal Server Error")
        if not start:
            raise server.HandlerResultError("the app sent no response")
        pairs = [(bytes(n).decode("latin-1"), bytes(v).decode("latin-1")) for n, v in start.get("headers", [])]
        return Response(_status(start["status"], server), server.checked_headers(pairs), b"".join(chunks))


# --------------------------------------------------------------------------- knative


class KnativeAdapter(AsgiAdapter):
    """``func``'s Python template: ``new()`` makes the function; its ``handle`` is ASGI;
    ``start(cfg)`` at start with the environment, ``stop()`` at the end; ``alive()`` and
    ``ready()`` answer ``/health/liveness`` and ``/health/readiness``."""

    def __init__(self, server: Any, config: Any, factory: Any) -> None:
        instance = factory()
        if not callable(getattr(instance, "handle", None)):
            raise server.LoadError(f"'{config.entrypoint}()' returned an object without handle()")
        super().__init__(server, config, instance.handle)
        self.instance = instance

    async def start(self) -> None:
        hook = getattr(self.instance, "start", None)
        if callable(hook):
            result = hook(dict(os.environ))
            if self.server.is_awaitable(result):
                await result

    async def stop(self) -> None:
        hook = getattr(self.instance, "stop", None)
        if callable(hook):
            result = hook()
            if self.server.is_awaitable(result):
                await result

    async def __call__(self, call: Call, run: Any) -> Response:
        probe = {"/health/liveness": "alive", "/health/readiness": "ready"}.get(call.path)
        if probe is not None:
            return await self.health(probe, call)
        return await super().__call__(call, run)

    async def health(self, name: str, call: Call) -> Response:
        hook = getattr(self.instance, name, None)
        ok, message = True, "OK"
        if callable(hook):
            result = hook()
            if self.server.is_awaitable(result):
                result = await result
            ok, message = result if isinstance(result, tuple) else (bool(result), "")
        status = 200 if ok else 500
        return Response(status, [("content-type", "text/plain; charset=utf-8")], str(message).encode())


# --------------------------------------------------------------------------- WSGI


class WsgiAdapter:
    """A PEP 3333 application, called on the server's thread pool."""

    def __init__(self, server: Any, config: Any, app: Any) -> None:
        self.server = server
        self.app = app

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def environ(self, call: Call) -> dict[str, Any]:
        import io

        environ: dict[str, Any] = {
            "REQUEST_METHOD": call.method,
            "SCRIPT_NAME": "",
            # PEP 3333: the decoded path, its bytes as latin-1 characters
            "PATH_INFO": call.path.encode("utf-8").decode("latin-1"),
            "QUERY_STRING": call.query_string,
            "SERVER_NAME": "localhost",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(call.body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(call.body)),
        }
        for name, value in call.joined_headers().items():
            if "_" in name:
                # X-Forwarded_For would read as X-Forwarded-For: dropped, as gunicorn does
                continue
            if name == "content-type":
                environ["CONTENT_TYPE"] = value
            elif name == "content-length":
                continue
            else:
                environ["HTTP_" + name.upper().replace("-", "_")] = value
        host = environ.get("HTTP_HOST")
        if host:
            environ["SERVER_NAME"] = host.rsplit(":", 1)[0]
        return environ

    def run(self, call: Call) -> Response:
        server = self.server
        start: list[Any] = []
        written: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if start and not exc_info:
                raise AssertionError("start_response called twice without exc_info")
            start[:] = [status, headers]
            return written.append

        result = self.app(self.environ(call), start_response)
        try:
            for chunk in result:
                written.append(bytes(chunk))
        finally:
            close = getattr(result, "close", None)
            if callable(close):
                close()
        if not start:
            raise server.HandlerResultError("the app did not call start_response")
        code = start[0].split(" ", 1)[0]
        status = _status(int(code) if code.isdigit() else -1, server)
        pairs = [(str(n), str(v)) for n, v in start[1]]
        return Response(status, server.checked_headers(pairs), b"".join(written))

    async def __call__(self, call: Call, run: Any) -> Response:
        try:
            return await run(self.run, call)
        except Exception as exc:
            self.server.log_exception(call.invocation_id, exc)
            return Response(500, [("content-type", "text/plain; charset=utf-8")], b"Internal Server Error")


ADAPTERS = {
    "lambda": LambdaAdapter,
    "openfaas": OpenFaaSAdapter,
    "knative": KnativeAdapter,
    "asgi": AsgiAdapter,
    "wsgi": WsgiAdapter,
}

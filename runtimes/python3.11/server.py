"""sless runtime server for Python 3.11 (stdlib only).

Implements the handler contract of ARCHITECTURE.md: ``def handle(event, context)`` (sync or
async) in the tenant's code, served over HTTP/1.1 with keep-alive on a Unix socket
(``SLESS_SOCKET``, embedded mode) or on TCP ``0.0.0.0:$PORT`` (container image).

Design:
- The handler module is imported *before* the socket is bound, so a socket that accepts
  connections means the function is ready.
- A small hand-written HTTP/1.1 parser on asyncio streams: the gateway is the only client,
  the path is hot, and http.server costs a thread and a re-parse per request.
- Sync handlers run in a thread pool of ``SLESS_CONCURRENCY`` threads; a semaphore of the
  same size bounds async handlers too, so extra requests queue.
- A handler exception answers 500 with a fixed message and the invocation id; the traceback
  goes to stderr (the function's log), each line prefixed with the invocation id, never into
  the response.
- Every line a call writes to ``sys.stdout``/``sys.stderr`` starts with ``[<invocation
  id>] `` (``CallLog``): the call is a context variable, set for the call's task and copied
  to the pool thread that runs a sync handler, so concurrent calls tag their own lines. A
  call's partial line waits for its newline, and its lines go out in one write, so lines of
  concurrent calls never mix. Output outside a call (at import) is written as it is.
- ``--check`` imports the handler, checks the entrypoint is callable and prints one line.
  Its message is shown to the tenant, so paths are made relative to the code directory.
- ``--prestarted``: a generic worker of the gateway's pre-started pool
  (sless/sandbox/prestarting.py). It binds the socket at once and waits for one message:
  the function's environment, its address-space limit and its log as the only file
  descriptor. It takes them on, imports the handler, answers ``ok`` and from then on
  serves that function like a worker started for it.
"""

from __future__ import annotations

import sys


class _OnFirstUse:
    """A stand-in for a module the stdlib imports but this server never needs: the first
    attribute asked of it imports the real module and hands it to the modules that hold
    the stand-in (a handler doing TLS through asyncio, a debug repr needing inspect).
    ``constants`` answer without importing (``logging.DEBUG`` is read at import)."""

    def __init__(self, name: str, **constants: object) -> None:
        self._name = name
        self._users: tuple = ()
        self.__dict__.update(constants)

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):  # the import system's questions (__spec__...)
            raise AttributeError(attribute)
        if sys.modules.get(self._name) is self:
            del sys.modules[self._name]
        import importlib

        real = importlib.import_module(self._name)
        for module in self._users:
            setattr(module, self._name, real)
        return getattr(real, attribute)


class _LoggingOnFirstUse(_OnFirstUse):
    """``logging`` for asyncio and concurrent.futures, which only make their logger at
    import: the logger is a stand-in too, and logging is imported when it logs a warning
    or worse. Until something imports logging nothing can have configured it, so a
    debug or info record would be dropped (the root level is WARNING): those are dropped
    here without importing it."""

    def getLogger(self, name: str | None = None) -> _LoggerOnFirstUse:
        return _LoggerOnFirstUse(name)


class _LoggerOnFirstUse:
    def __init__(self, name: str | None) -> None:
        self._name = name

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        if attribute in ("debug", "info") and "logging" not in sys.modules:
            return _drop
        import logging

        return getattr(logging.getLogger(self._name), attribute)


def _drop(*args: object, **kwargs: object) -> None:
    return None


class _AnnotationsOnly:
    """``typing`` while asyncio imports: asyncio.timeouts and asyncio.staggered use it
    only in annotations, evaluated at import (``Optional[float]``), and for ``@final``.
    Each name is a form that any subscript returns; ``final`` leaves the class as is."""

    @staticmethod
    def final(cls: type) -> type:
        return cls

    def __getattr__(self, attribute: str) -> _AnnotationsOnly:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return self

    def __getitem__(self, item: object) -> _AnnotationsOnly:
        return self


def _import_asyncio_lean() -> None:
    """Import asyncio (and urllib.parse) without the modules they import for what this
    server never does (PSS per idle worker, measured by bench/memory.py):
    - ssl (OpenSSL, about 1.2 MB): absent while asyncio imports (asyncio does without);
    - inspect (with ast, dis and tokenize, about 1 MB): asyncio asks it only in debug
      reprs and for odd awaitables;
    - logging (about 0.5 MB with string): asyncio and concurrent.futures log only
      failures, and their debug lines go nowhere until logging is configured;
    - typing (about 0.5 MB): annotations of asyncio.timeouts and asyncio.staggered;
    - ipaddress (about 0.4 MB): urllib.parse checks ``[...]`` hosts with it.
    Afterwards the modules that imported each get a stand-in that imports the real module
    on first use. The tenant's own ``import ssl`` (or inspect, logging...) is unaffected:
    no stand-in stays in ``sys.modules``. What asyncio.timeouts' annotations say stays
    the import-time form (``typing.get_type_hints`` of asyncio.timeout is not real)."""
    if "asyncio" in sys.modules:
        return
    users = {
        "ssl": ("asyncio.base_events", "asyncio.selector_events", "asyncio.sslproto"),
        "inspect": ("asyncio.coroutines", "asyncio.format_helpers", "asyncio.tasks"),
        "logging": ("asyncio.futures", "asyncio.log", "concurrent.futures._base"),
        "typing": ("asyncio.staggered",),
        "ipaddress": ("urllib.parse",),
    }
    stand_ins = {name: _OnFirstUse(name) for name in users if name not in sys.modules}
    if "logging" in stand_ins:
        stand_ins["logging"] = _LoggingOnFirstUse("logging", DEBUG=10)
    while_importing: dict[str, object] = {**stand_ins, "ssl": None}
    if "typing" in stand_ins:
        while_importing["typing"] = _AnnotationsOnly()
    for name in stand_ins:
        sys.modules[name] = while_importing[name]  # type: ignore[assignment]
    try:
        import asyncio
        import asyncio.sslproto  # noqa: F401
        import concurrent.futures  # noqa: F401
        import urllib.parse  # noqa: F401
    finally:
        for name in stand_ins:
            if name in sys.modules and sys.modules[name] is while_importing[name]:
                del sys.modules[name]
    for name, stand_in in stand_ins.items():
        stand_in._users = tuple(sys.modules[module] for module in users[name])
        for module in stand_in._users:
            setattr(module, name, stand_in)


_import_asyncio_lean()

import asyncio  # noqa: E402
import concurrent.futures  # noqa: E402
import contextlib  # noqa: E402
import contextvars  # noqa: E402
import functools  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402
from collections.abc import Awaitable  # noqa: E402
from urllib.parse import parse_qsl, unquote, urlsplit  # noqa: E402

Any = object  # in annotations only (from __future__): typing stays unloaded

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 32 * 1024 * 1024
IDLE_TIMEOUT_S = 300.0
ENTRYPOINT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\.[A-Za-z_][A-Za-z0-9_]*$")
HEADER_TOKEN_RE = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
}
REASONS = {
    200: "OK",
    201: "Created",
    202: "Accepted",
    204: "No Content",
    301: "Moved Permanently",
    302: "Found",
    304: "Not Modified",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    411: "Length Required",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class Config:
    def __init__(self, env: dict[str, str]) -> None:
        self.socket = env.get("SLESS_SOCKET") or None
        self.port = int(env.get("PORT") or "8080")
        self.code_dir = env.get("SLESS_CODE_DIR") or "/code"
        self.deps_dir = env.get("SLESS_DEPS_DIR") or None
        self.entrypoint = env.get("SLESS_ENTRYPOINT") or "handler.handle"
        self.function = env.get("SLESS_FUNCTION", "")
        self.namespace = env.get("SLESS_NAMESPACE", "")
        self.timeout_s = float(env.get("SLESS_TIMEOUT_S") or "30")
        self.concurrency = max(1, int(env.get("SLESS_CONCURRENCY") or "1"))
        #: the handler contract (runtimes/python3.11/interfaces.py); "sless" is ours
        self.interface = env.get("SLESS_INTERFACE") or "sless"


class Context:
    """What the handler gets as ``context``."""

    __slots__ = ("deadline", "function", "invocation_id", "namespace", "trace_id", "traceparent", "websocket")

    def __init__(
        self, function: str, namespace: str, invocation_id: str, deadline: float, traceparent: str = ""
    ):
        self.function = function
        self.namespace = namespace
        self.invocation_id = invocation_id
        self.deadline = deadline
        #: the W3C trace context of this call (the gateway's call span as parent): send it
        #: on as the ``traceparent`` header of outgoing calls to continue the trace
        self.traceparent = traceparent
        self.trace_id = traceparent[3:35] if len(traceparent) == 55 else ""
        #: the caller's WebSocket session (``receive``/``send``/``close``), for a call that
        #: is one (docs/websockets.md); None for an HTTP call
        self.websocket: WebSocket | None = None

    def remaining_time(self) -> float:
        """Seconds left before the gateway gives up on this invocation (never negative)."""
        return max(0.0, self.deadline - time.time())

    def __repr__(self) -> str:
        return (
            f"Context(function={self.function!r}, namespace={self.namespace!r}, "
            f"invocation_id={self.invocation_id!r}, deadline={self.deadline!r})"
        )


class LoadError(Exception):
    """The handler cannot be loaded; the message is safe to show to the tenant."""


class BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


# --------------------------------------------------------------------------- loading


def _relative(text: str, config: Config) -> str:
    """Remove host-specific directory prefixes from a message shown to the tenant."""
    for prefix, shown in ((config.code_dir, ""), (config.deps_dir, "<deps>/")):
        if prefix:
            text = text.replace(prefix.rstrip("/") + "/", shown)
    return text


def _describe(exc: BaseException, config: Config) -> str:
    if isinstance(exc, SyntaxError):
        where = exc.filename or "?"
        message = f"SyntaxError in {where} line {exc.lineno}: {exc.msg}"
    else:
        message = f"{type(exc).__name__}: {exc}"
        frames = [
            f
            for f in traceback.extract_tb(exc.__traceback__)
            if f.filename.startswith(config.code_dir.rstrip("/") + "/")
        ]
        if frames:
            message += f" ({frames[-1].filename} line {frames[-1].lineno})"
    message = _relative(message, config)
    return message if len(message) <= 400 else message[:397] + "..."


def load_handler(config: Config) -> Any:
    if not ENTRYPOINT_RE.match(config.entrypoint):
        raise LoadError(f"invalid entrypoint {config.entrypoint!r}: expected 'module.function'")
    module_name, func_name = config.entrypoint.rsplit(".", 1)
    if config.deps_dir:
        import site

        sys.path.insert(0, config.deps_dir)
        # processes .pth files of installed packages; the directory is already on the path
        site.addsitedir(config.deps_dir)
    sys.path.insert(0, config.code_dir)
    relative = module_name.replace(".", "/")
    candidates = [f"{relative}.py", f"{relative}/__init__.py"]
    if not any(os.path.isfile(os.path.join(config.code_dir, c)) for c in candidates):
        raise LoadError(f"handler file '{candidates[0]}' not found in the code directory")
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise LoadError(f"cannot import '{module_name}': {_describe(exc, config)}") from None
    func = getattr(module, func_name, None)
    if func is None:
        raise LoadError(f"'{module_name}' has no attribute '{func_name}'")
    if not callable(func):
        raise LoadError(f"'{config.entrypoint}' is not callable")
    return func


def run_check(config: Config) -> int:
    # whatever the tenant's module prints at import goes to stderr: stdout is our one line
    try:
        with contextlib.redirect_stdout(sys.stderr):
            make_adapter(config, load_handler(config))
    except LoadError as e:
        print(f"error: {e}", flush=True)
        return 1
    print(f"ok: {config.entrypoint} is callable", flush=True)
    return 0


# --------------------------------------------------------------------------- HTTP


class Request:
    __slots__ = ("body", "headers", "method", "target", "version")

    def __init__(self, method: str, target: str, version: str, headers: list[tuple[str, str]]):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = b""


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Request | None:
    """Read one request; None on a clean close between requests."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT_S)
    except asyncio.IncompleteReadError as e:
        if e.partial.strip():
            raise BadRequest(400, "bad_request", "incomplete request head") from None
        return None
    except asyncio.LimitOverrunError:
        raise BadRequest(431, "headers_too_large", "request head too large") from None
    except (TimeoutError, ConnectionError):
        return None
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(400, "bad_request", "malformed request line")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not HEADER_TOKEN_RE.match(name):
            raise BadRequest(400, "bad_request", "malformed header")
        headers.append((name.lower(), value.strip(" \t")))
    request = Request(parts[0], parts[1], parts[2], headers)
    values = {n: v for n, v in headers}
    if values.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    te = values.get("transfer-encoding", "").lower()
    if te:
        if te != "chunked":
            raise BadRequest(501, "not_implemented", "unsupported transfer-encoding")
        request.body = await read_chunked(reader)
    elif "content-length" in values:
        raw = values["content-length"]
        if not raw.isdigit():
            raise BadRequest(400, "bad_request", "invalid content-length")
        length = int(raw)
        if length > MAX_BODY_BYTES:
            raise BadRequest(413, "payload_too_large", "request body too large")
        if length:
            request.body = await reader.readexactly(length)
    return request


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BadRequest(400, "bad_request", "invalid chunk size") from None
        if size == 0:
            # trailers, up to the empty line
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(chunks)
        total += size
        if total > MAX_BODY_BYTES:
            raise BadRequest(413, "payload_too_large", "request body too large")
        chunks.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise BadRequest(400, "bad_request", "malformed chunk")


def render(status: int, headers: dict[str, str] | list[tuple[str, str]], body: bytes, keep_alive: bool) -> bytes:
    out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    for name, value in headers.items() if isinstance(headers, dict) else headers:
        out.append(f"{name}: {value}")
    out.append(f"content-length: {len(body)}")
    if not keep_alive:
        out.append("connection: close")
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body


def render_head(status: int, headers: dict[str, str] | list[tuple[str, str]], keep_alive: bool) -> bytes:
    """The head of a streamed answer: chunked, its length unknown until it ends."""
    out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}"]
    for name, value in headers.items() if isinstance(headers, dict) else headers:
        out.append(f"{name}: {value}")
    out.append("transfer-encoding: chunked")
    if not keep_alive:
        out.append("connection: close")
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


def error_body(code: str, message: str, invocation_id: str | None = None) -> bytes:
    err: dict[str, str] = {"code": code, "message": message}
    if invocation_id:
        err["invocation_id"] = invocation_id
    return json.dumps({"error": err}).encode()


# --------------------------------------------------------------------------- invocation


def is_json_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def build_event(request: Request) -> dict[str, Any]:
    target = request.target
    if not target.startswith("/"):
        parts = urlsplit(target)
        target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    path, _, query_string = target.partition("?")
    path = unquote(path) or "/"
    if not path.startswith("/"):
        path = "/" + path
    query: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for key, value in parse_qsl(query_string, keep_blank_values=True):
        query[key] = value
        multi.setdefault(key, []).append(value)
    headers: dict[str, str] = {}
    for name, value in request.headers:
        if name.startswith("x-sless-"):
            continue
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    body: Any = None
    is_b64 = False
    if request.body:
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            body = base64.b64encode(request.body).decode("ascii")
            is_b64 = True
        else:
            if is_json_type(headers.get("content-type", "")):
                try:
                    body = json.loads(text)
                except ValueError:
                    raise BadRequest(400, "invalid_json", "request body is not valid JSON") from None
            else:
                body = text
    return {
        "method": request.method,
        "path": path,
        "query": query,
        "multiQuery": multi,
        "headers": headers,
        "body": body,
        "isBase64Encoded": is_b64,
    }


class HandlerResultError(Exception):
    """The handler returned something that cannot be sent as a response."""


def checked_headers(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The one check of the headers a handler (or an adapter on its behalf) answers with:
    names lowercased, a name or value that would split the response refused, hop-by-hop
    and ``X-Sless-*`` fields dropped, and so are the fields a ``Connection`` field names
    (RFC 9110 7.6.1: the ``Connection`` is dropped here, so the gateway could not)."""
    named = {
        part.strip().lower()
        for name, value in pairs
        if str(name).lower() == "connection"
        for part in str(value).split(",")
    }
    out: list[tuple[str, str]] = []
    for name, value in pairs:
        name = str(name).lower()
        value = str(value)
        if not HEADER_TOKEN_RE.match(name) or any(c in value for c in "\r\n\0"):
            # response splitting: refuse rather than send something we did not mean to
            raise HandlerResultError(f"invalid response header {name!r}")
        if name in HOP_BY_HOP or name in named or name.startswith("x-sless-"):
            continue
        out.append((name, value))
    return out


class Streamed:
    """A body the handler streams: an iterator or async iterator of chunks (bytes as they
    are, str as UTF-8, anything else as one line of JSON), sent chunk by chunk as it
    yields. Sync iterators advance on the handler thread pool, so a blocking generator
    never stalls the server; each next chunk is asked for only once the previous one is
    written (the gateway's back-pressure reaches the handler)."""

    __slots__ = ("_iterator", "is_async")

    def __init__(self, iterable: Any) -> None:
        self.is_async = hasattr(iterable, "__anext__") or hasattr(iterable, "__aiter__")
        self._iterator = iterable.__aiter__() if self.is_async else iter(iterable)

    async def next(self, pool: Any) -> bytes | None:
        """The next chunk as bytes; None at the end."""
        if self.is_async:
            try:
                value = await self._iterator.__anext__()
            except StopAsyncIteration:
                return None
        else:
            value = await in_call_context(pool, next, self._iterator, _END)
            if value is _END:
                return None
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, str):
            return value.encode("utf-8")
        return json_bytes(value) + b"\n"

    async def close(self, pool: Any) -> None:
        """Stop the handler: GeneratorExit at its ``yield``, so its ``finally`` runs."""
        if self.is_async:
            close = getattr(self._iterator, "aclose", None)
            if close is not None:
                await close()
            return
        close = getattr(self._iterator, "close", None)
        if close is not None:
            await in_call_context(pool, close)


_END = object()


def is_stream(value: Any) -> bool:
    """A generator, an async generator or iterator, or any other iterator (not a str,
    bytes, dict or list: those are whole bodies)."""
    if isinstance(value, (str, bytes, bytearray, dict, list, tuple)):
        return False
    return (
        isinstance(value, (types.GeneratorType, types.AsyncGeneratorType))
        or hasattr(value, "__anext__")
        or (hasattr(value, "__next__") and hasattr(value, "__iter__"))
    )


def make_response(result: Any) -> tuple[int, dict[str, str], bytes | Streamed]:
    if is_stream(result):
        return 200, {"content-type": "application/octet-stream"}, Streamed(result)
    if isinstance(result, dict) and "statusCode" in result:
        status = result["statusCode"]
        if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
            raise HandlerResultError(f"statusCode must be an integer 100-599, got {status!r}")
        raw_headers = result.get("headers") or {}
        if not isinstance(raw_headers, dict):
            raise HandlerResultError("headers must be a dict")
        headers = dict(checked_headers(list(raw_headers.items())))
        body = result.get("body")
        if is_stream(body):
            headers.setdefault("content-type", "application/octet-stream")
            return status, headers, Streamed(body)
        if body is None:
            payload = b""
        elif isinstance(body, (bytes, bytearray)):
            payload = bytes(body)
            headers.setdefault("content-type", "application/octet-stream")
        elif isinstance(body, str):
            if result.get("isBase64Encoded"):
                import base64
                import binascii

                try:
                    payload = base64.b64decode(body, validate=True)
                except (binascii.Error, ValueError) as e:
                    raise HandlerResultError("body is not valid base64") from e
                headers.setdefault("content-type", "application/octet-stream")
            else:
                payload = body.encode("utf-8")
                headers.setdefault("content-type", "text/plain; charset=utf-8")
        else:
            payload = json_bytes(body)
            headers.setdefault("content-type", "application/json")
        return status, headers, payload
    if isinstance(result, (bytes, bytearray)):
        return 200, {"content-type": "application/octet-stream"}, bytes(result)
    return 200, {"content-type": "application/json"}, json_bytes(result)


def json_bytes(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise HandlerResultError(f"return value is not JSON serializable: {e}") from e


#: code flags (inspect's CO_COROUTINE and CO_ITERABLE_COROUTINE)
_CO_COROUTINE = 0x80
_CO_ITERABLE_COROUTINE = 0x100


def is_coroutine_function(func: Any) -> bool:
    """inspect.iscoroutinefunction, without importing inspect: an ``async def`` function,
    also as a bound method or inside functools.partial."""
    while isinstance(func, functools.partial):
        func = func.func
    if isinstance(func, types.MethodType):
        func = func.__func__
    return isinstance(func, types.FunctionType) and bool(func.__code__.co_flags & _CO_COROUTINE)


def is_awaitable(value: Any) -> bool:
    """inspect.isawaitable, without importing inspect."""
    return isinstance(value, Awaitable) or (
        isinstance(value, types.GeneratorType) and bool(value.gi_code.co_flags & _CO_ITERABLE_COROUTINE)
    )


def log_exception(invocation_id: str, exc: BaseException) -> None:
    lines = "".join(traceback.format_exception(exc)).rstrip("\n").split("\n")
    stderr = sys.stderr
    stream = stderr.stream if isinstance(stderr, CallLog) else stderr  # tagged here already
    stream.write("".join(f"[{invocation_id}] {line}\n" for line in lines))
    stream.flush()


#: the invocation id of the call running in this context (None: outside any call)
CALL_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("sless_call_id", default=None)
#: a partial line longer than this is written out without waiting for its newline
MAX_PARTIAL_LINE = 64 * 1024


class CallLog:
    """``sys.stdout`` or ``sys.stderr`` while the server runs: each line written by a call
    starts with ``[<invocation id>] `` (the log stream reads the id from it). A call's text
    after its last newline waits for the next one (or the call's end), then its whole
    lines go to the stream in one write: no more writes than before, and lines of
    concurrent calls never interleave mid-line. Anything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        #: invocation id -> the call's text after its last newline
        self._partial: dict[str, str] = {}

    def write(self, text: str) -> int:
        call = CALL_ID.get()
        if call is None:
            return self.stream.write(text)
        pending = self._partial.pop(call, "") + text
        end = pending.rfind("\n")
        if end < 0 and len(pending) <= MAX_PARTIAL_LINE:
            self._partial[call] = pending
            return len(text)
        if end < 0:
            end = len(pending)
        elif end + 1 < len(pending):
            self._partial[call] = pending[end + 1 :]
        prefix = f"[{call}] "
        self.stream.write(prefix + pending[:end].replace("\n", "\n" + prefix) + "\n")
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def end(self, call: str) -> None:
        """The call is over: its unfinished line is written, ended."""
        rest = self._partial.pop(call, None)
        if rest:
            self.stream.write(f"[{call}] {rest}\n")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def tag_call_output() -> None:
    """From now on, what calls print carries their invocation id (``CallLog``)."""
    if not isinstance(sys.stdout, CallLog):
        sys.stdout = CallLog(sys.stdout)
    if not isinstance(sys.stderr, CallLog):
        sys.stderr = CallLog(sys.stderr)


def end_call_output() -> None:
    """The call of this context is over: write its unfinished lines, leave its context."""
    call = CALL_ID.get()
    if call is None:
        return
    CALL_ID.set(None)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, CallLog):
            stream.end(call)


def in_call_context(pool: Any, func: Any, *args: Any) -> Any:
    """``run_in_executor`` in the caller's context: the thread's output is the call's."""
    context = contextvars.copy_context()
    return asyncio.get_running_loop().run_in_executor(pool, context.run, func, *args)


def load_interfaces() -> Any:
    """The adapters module (interfaces.py next to this file), loaded by path: ``-I`` keeps
    this directory off ``sys.path``, and a tenant's own module named ``interfaces`` must not
    be shadowed."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interfaces.py")
    spec = importlib.util.spec_from_file_location("_sless_interfaces", path)
    if spec is None or spec.loader is None:
        raise LoadError("the runtime's interfaces.py is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules["_sless_interfaces"] = module
    spec.loader.exec_module(module)
    return module


def make_adapter(config: Config, func: Any) -> Any:
    """None for the ``sless`` contract; else the interface's adapter around ``func``."""
    if config.interface == "sless":
        return None
    interfaces = load_interfaces()
    adapter_class = interfaces.ADAPTERS.get(config.interface)
    if adapter_class is None:
        raise LoadError(f"unknown interface {config.interface!r}")
    try:
        return adapter_class(sys.modules[__name__], config, func)
    except LoadError:
        raise
    except Exception as exc:
        raise LoadError(f"cannot make the {config.interface} function: {_describe(exc, config)}") from None


class Server:
    def __init__(self, config: Config, func: Any, adapter: Any = None) -> None:
        self.config = config
        self.func = func
        self.adapter = adapter
        self.is_async = is_coroutine_function(func)
        self.slots = asyncio.Semaphore(config.concurrency)
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=config.concurrency, thread_name_prefix="handler"
        )

    async def invoke(self, request: Request) -> tuple[int, dict[str, str], bytes]:
        values = dict(request.headers)
        invocation_id = values.get("x-sless-invocation-id") or os.urandom(16).hex()
        CALL_ID.set(invocation_id)  # this connection's task: ended by serve_connection
        try:
            deadline = float(values["x-sless-deadline"])
        except (KeyError, ValueError):
            deadline = time.time() + self.config.timeout_s
        base = {"x-sless-invocation-id": invocation_id}
        if self.adapter is not None:
            return await self.invoke_adapter(request, invocation_id, deadline)
        try:
            event = build_event(request)
        except BadRequest as e:
            return e.status, {**base, "content-type": "application/json"}, error_body(e.code, e.message, invocation_id)
        context = Context(
            self.config.function, self.config.namespace, invocation_id, deadline, values.get("traceparent", "")
        )
        try:
            if self.is_async:
                result = await self.func(event, context)
            else:
                result = await in_call_context(self.pool, self.func, event, context)
                if is_awaitable(result):
                    result = await result
            status, headers, body = make_response(result)
        except Exception as exc:
            log_exception(invocation_id, exc)
            return (
                500,
                {**base, "content-type": "application/json"},
                error_body("handler_error", "the function raised an error", invocation_id),
            )
        headers.update(base)
        return status, headers, body

    async def run(self, func: Any, *args: Any) -> Any:
        """``func(*args)``: awaited if async, else on the handler thread pool."""
        if is_coroutine_function(func):
            return await func(*args)
        result = await in_call_context(self.pool, func, *args)
        if is_awaitable(result):
            result = await result
        return result

    async def invoke_adapter(
        self, request: Request, invocation_id: str, deadline: float
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        base = [("x-sless-invocation-id", invocation_id)]
        call = self.adapter_module.Call(request, invocation_id, deadline)
        try:
            response = await self.adapter(call, self.run)
        except Exception as exc:
            log_exception(invocation_id, exc)
            return (
                500,
                [*base, ("content-type", "application/json")],
                error_body("handler_error", "the function raised an error", invocation_id),
            )
        return response.status, [*response.headers, *base], response.body

    async def stream(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        head: bytes,
        body: Streamed,
        invocation_id: str,
    ) -> bool:
        """Write ``head``, then each chunk as the handler yields it (HTTP/1.1 chunked),
        waiting for the socket to drain before asking for the next. The gateway closing
        the connection (EOF on ``reader``) stops the handler. True: the stream ended as
        the handler meant it, and the connection can serve the next request."""
        writer.write(head)
        gone = asyncio.ensure_future(reader.read(1))  # the gateway sends nothing meanwhile
        pending: asyncio.Future[Any] | None = None
        try:
            await writer.drain()
            while True:
                pending = asyncio.ensure_future(body.next(self.pool))
                await asyncio.wait((pending, gone), return_when=asyncio.FIRST_COMPLETED)
                if not pending.done():
                    break  # the gateway left (or talked out of turn)
                chunk, pending = pending.result(), None
                if chunk is None:
                    writer.write(b"0\r\n\r\n")
                    await writer.drain()
                    return not gone.done()
                if chunk:  # an empty chunk would end the body: never sent
                    writer.write(b"%x\r\n%b\r\n" % (len(chunk), chunk))
                    await writer.drain()
                if gone.done():
                    break
            return False
        except (ConnectionError, asyncio.CancelledError):
            return False
        except Exception as exc:  # the handler failed mid-stream: the caller sees it cut
            log_exception(invocation_id, exc)
            return False
        finally:
            gone.cancel()
            await self.stop_stream(body, pending, invocation_id)

    async def stop_stream(self, body: Streamed, pending: Any, invocation_id: str) -> None:
        if pending is not None:
            if body.is_async:
                pending.cancel()
            # a sync generator cannot be closed while its thread runs it: let it yield
            with contextlib.suppress(BaseException):
                await pending
        try:
            await body.close(self.pool)
        except Exception as exc:
            log_exception(invocation_id, exc)

    @property
    def adapter_module(self) -> Any:
        return sys.modules["_sless_interfaces"]

    async def serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    request = await read_request(reader, writer)
                except BadRequest as e:
                    writer.write(
                        render(e.status, {"content-type": "application/json"}, error_body(e.code, e.message), False)
                    )
                    await writer.drain()
                    return
                if request is None:
                    return
                if wants_websocket(request):
                    # the session holds a slot, and the connection, until it ends
                    async with self.slots:
                        await serve_websocket(self, request, reader, writer)
                    return
                connection = dict(request.headers).get("connection", "").lower()
                keep_alive = connection != "close" if request.version == "HTTP/1.1" else connection == "keep-alive"
                # a slot bounds the calls running at once; a stream holds it until its
                # last chunk is written
                await self.slots.acquire()
                try:
                    status, headers, body = await self.invoke(request)
                    if isinstance(body, Streamed):
                        if request.method == "HEAD":
                            await self.stop_stream(body, None, "")
                            body = b""
                        else:
                            head = render_head(status, headers, keep_alive)
                            invocation_id = dict(headers).get("x-sless-invocation-id", "")
                            if not await self.stream(reader, writer, head, body, invocation_id):
                                return
                            if not keep_alive:
                                return
                            continue
                finally:
                    end_call_output()
                    self.slots.release()
                if request.method == "HEAD":
                    body = b""
                writer.write(render(status, headers, body, keep_alive))
                await writer.drain()
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            with contextlib.suppress(Exception):
                writer.close()


# --------------------------------------------------------------------------- websockets
# The gateway speaks RFC 6455 with the caller (its ASGI server does the framing and the
# masking) and relays each whole message to the worker over the same Unix socket after an
# HTTP/1.1 upgrade to ``sless-websocket``: one frame per message, a kind byte (1 text, 2
# binary, 8 close) and a 4-byte big-endian length, then the payload. The gateway bounds
# every message; this side bounds what it reads too (docs/websockets.md).

WS_PROTOCOL = "sless-websocket"
WS_TEXT, WS_BINARY, WS_CLOSE = 1, 2, 8
WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


class WebSocketClosed(Exception):
    """The session ended: ``send`` after the caller (or the gateway) closed it."""


class WebSocket:
    """``context.websocket``: the caller's WebSocket session, as whole messages."""

    __slots__ = ("_reader", "_writer", "close_code", "closed")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self.closed = False
        #: the close code the caller (or the gateway) sent, once closed
        self.close_code: int | None = None

    async def receive(self) -> str | bytes | None:
        """The next message (``str`` for text, ``bytes`` for binary); None once closed."""
        if self.closed:
            return None
        try:
            head = await self._reader.readexactly(5)
            kind, length = head[0], int.from_bytes(head[1:5], "big")
            if length > WS_MAX_MESSAGE_BYTES or kind not in (WS_TEXT, WS_BINARY, WS_CLOSE):
                raise ConnectionError("bad frame")
            payload = await self._reader.readexactly(length)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed = True
            return None
        if kind == WS_CLOSE:
            self.closed = True
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            return None
        return payload.decode("utf-8", "replace") if kind == WS_TEXT else payload

    async def send(self, message: str | bytes) -> None:
        """Send one message: ``str`` as text, ``bytes`` as binary."""
        if self.closed:
            raise WebSocketClosed("the WebSocket session is closed")
        if isinstance(message, str):
            kind, payload = WS_TEXT, message.encode()
        elif isinstance(message, (bytes, bytearray, memoryview)):
            kind, payload = WS_BINARY, bytes(message)
        else:
            raise TypeError("send() takes str or bytes")
        await self._frame(kind, payload)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """End the session with ``code`` (the handler returning closes it with 1000)."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(ConnectionError):
            await self._frame(WS_CLOSE, code.to_bytes(2, "big") + reason.encode()[:120])

    async def _frame(self, kind: int, payload: bytes) -> None:
        try:
            self._writer.write(bytes((kind,)) + len(payload).to_bytes(4, "big") + payload)
            await self._writer.drain()
        except ConnectionError:
            self.closed = True
            raise WebSocketClosed("the WebSocket session is closed") from None


def wants_websocket(request: Request) -> bool:
    return dict(request.headers).get("upgrade", "").lower() == WS_PROTOCOL


async def serve_websocket(server: Any, request: Request, reader: Any, writer: Any) -> None:
    """One WebSocket session: the handler runs with ``context.websocket`` until it returns,
    fails, or the gateway closes the connection (the handler is then cancelled)."""
    if not server.is_async or server.adapter is not None:
        body = error_body("not_implemented", "WebSockets need an async def handler")
        writer.write(render(501, {"content-type": "application/json"}, body, False))
        await writer.drain()
        return
    values = dict(request.headers)
    invocation_id = values.get("x-sless-invocation-id") or os.urandom(16).hex()
    try:
        deadline = float(values["x-sless-deadline"])
    except (KeyError, ValueError):
        deadline = time.time() + server.config.timeout_s
    writer.write(
        f"HTTP/1.1 101 Switching Protocols\r\nupgrade: {WS_PROTOCOL}\r\nconnection: upgrade\r\n\r\n".encode()
    )
    await writer.drain()
    socket_ = WebSocket(reader, writer)
    context = Context(
        server.config.function, server.config.namespace, invocation_id, deadline, values.get("traceparent", "")
    )
    context.websocket = socket_
    try:
        await server.func(build_event(request), context)
    except (asyncio.CancelledError, WebSocketClosed):
        return
    except Exception as exc:
        log_exception(invocation_id, exc)
        await socket_.close(1011, "the function raised an error")
        return
    await socket_.close(1000)


EGRESS_PORT = 3128


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def start_egress_forwarder(socket_path: str | None) -> asyncio.AbstractServer | None:
    """Forward 127.0.0.1:3128 (HTTP_PROXY) to the gateway's egress proxy socket.

    The sandbox has no network; this loopback port is its only way out, and the proxy
    behind it allows only the function's egress allowlist.
    """
    if not socket_path:
        return None

    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return await asyncio.start_server(forward, host="127.0.0.1", port=EGRESS_PORT)


async def serve(config: Config, func: Any, sock: socket.socket | None = None) -> None:
    try:
        adapter = make_adapter(config, func)
        if adapter is not None:
            # before the socket accepts: an app's lifespan startup is part of being ready
            await adapter.start()
    except Exception as exc:
        message = exc if isinstance(exc, LoadError) else _describe(exc, config)
        print(f"sless: cannot start: {message}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    server = Server(config, func, adapter)
    if sock is not None:
        # a pre-started worker keeps the socket it was specialized on
        listener = await asyncio.start_unix_server(
            server.serve_connection, sock=sock, limit=MAX_HEADER_BYTES, backlog=128
        )
    elif config.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(config.socket)
        listener = await asyncio.start_unix_server(
            server.serve_connection, path=config.socket, limit=MAX_HEADER_BYTES, backlog=128
        )
    else:
        listener = await asyncio.start_server(
            server.serve_connection, host="0.0.0.0", port=config.port, limit=MAX_HEADER_BYTES, backlog=128
        )
    egress = await start_egress_forwarder(os.environ.get("SLESS_EGRESS_SOCKET"))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # signal.signal rather than loop.add_signal_handler: the latter asks inspect whether
    # the callback is a coroutine function, importing inspect (and ast, dis) into every
    # worker. The handler runs on this thread between bytecodes and wakes the loop.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _signum, _frame: loop.call_soon_threadsafe(stop.set))
    async with listener:
        await stop.wait()
    if adapter is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(adapter.stop(), 10)
    server.pool.shutdown(wait=False, cancel_futures=True)


# --------------------------------------------------------------------------- pre-started

MAX_SPECIALIZATION_BYTES = 1024 * 1024


def _receive_specialization(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One message: a JSON object, with the function's log file as the only fd."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 1)
    chunks = [data]
    total = len(data)
    while data:
        data = conn.recv(65536)
        total += len(data)
        if total > MAX_SPECIALIZATION_BYTES:
            raise ValueError("specialization message too large")
        chunks.append(data)
    message = json.loads(b"".join(chunks)) if total else {}
    if not isinstance(message, dict):
        raise ValueError("specialization message is not an object")
    return message, fds


def _become(message: dict[str, Any], fds: list[int]) -> Config:
    """Turn this generic worker into the function's worker, before any tenant code runs:
    its log as stdout/stderr, exactly the environment a directly started worker gets, and
    the function's address-space limit (a lowering, so it cannot be undone from inside)."""
    import resource

    if len(fds) != 1:
        raise ValueError("expected exactly one file descriptor (the log)")
    os.dup2(fds[0], 1)
    os.dup2(fds[0], 2)
    os.close(fds[0])
    env = message["env"]
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ValueError("env must map names to strings")
    os.environ.clear()
    os.environ.update({str(k): v for k, v in env.items()})
    limit = int(message["address_space"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return Config(dict(os.environ))


def serve_prestarted(socket_path: str) -> int:
    """Wait, sandboxed and generic, for the one message that says which function to be.

    The gateway's readiness probe connects and closes without a message: that is skipped.
    The first message decides for the life of the process; afterwards the socket serves
    that function only (a second message is an HTTP request like any other, and fails).
    """
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(128)
    while True:
        conn, _ = listener.accept()
        conn.settimeout(30)
        with conn:
            try:
                message, fds = _receive_specialization(conn)
            except (OSError, ValueError):
                continue
            if not message:
                for fd in fds:
                    os.close(fd)
                continue
            try:
                config = _become(message, fds)
                with contextlib.redirect_stdout(sys.stderr):
                    func = load_handler(config)
            except (LoadError, KeyError, TypeError, ValueError, OSError) as e:
                with contextlib.suppress(OSError):
                    conn.sendall(f"error: {e}\n".encode())
                return 1
            conn.sendall(b"ok\n")
        break
    run_loop(serve(config, func, sock=listener))
    return 0


def run_loop(main_coroutine: Any) -> None:
    """asyncio.run, without the SIGINT handler it installs: serve() sets its own, and the
    one asyncio.run leaves behind is a partial holding the main task, whose repr (made
    when signal.signal returns the old handler) imports inspect."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main_coroutine)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def main(argv: list[str]) -> int:
    # logs must appear immediately even when stdout is a file
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    # before the handler's import: a logging handler made then holds the wrapped stream
    tag_call_output()
    config = Config(dict(os.environ))
    if "--check" in argv[1:]:
        return run_check(config)
    if "--prestarted" in argv[1:] and config.socket:
        return serve_prestarted(config.socket)
    try:
        func = load_handler(config)
    except LoadError as e:
        print(f"sless: cannot start: {e}", file=sys.stderr, flush=True)
        return 1
    run_loop(serve(config, func))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

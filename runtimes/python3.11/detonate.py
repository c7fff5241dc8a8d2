"""Detonation harness (issue 29): import a function once and call it, recording what it does.

Not the serving runtime (``server.py`` is unchanged): this runs only at upload validation,
inside the same sandbox, in a network namespace that leads to a recording sink
(``sless.validation.sink``). It

- writes the canary credential files it is given (``DETONATION_FILES``) under $HOME;
- installs an audit hook (PEP 578) that records sockets, name lookups, processes, native
  imports, code compiled from strings and files opened for writing or credential files
  opened at all, as JSON lines on the trace fd (a dup of stdout taken before the function's
  code runs; the function's own prints go to stderr);
- imports the module and calls the handler with a GET, a JSON POST and a cron tick, with the
  clock as it is, moved to the next weekday, a month ahead and a year ahead (``time.time``,
  ``datetime.date.today``/``datetime.datetime.now`` and friends shifted, per calling
  thread), the twelve calls at once, all within the budget ``DETONATION_BUDGET_S``.

The trace is evidence, not the judge of last resort: code that runs can write fake trace
lines (they only add findings) or close the fd (the sink's record remains).
"""

import datetime
import importlib
import json
import os
import sys
import threading
import time

_TRACE = None
_CRED_PATHS = ()
_SEEN = set()
_REAL_TIME = time.time


def _emit(kind, **fields):
    if _TRACE is None:
        return
    key = (kind, json.dumps(fields, sort_keys=True, default=str)[:300])
    if key in _SEEN or len(_SEEN) > 500:
        return
    _SEEN.add(key)
    line = json.dumps({"kind": kind, **fields}, default=str)[:2000] + "\n"
    try:
        os.write(_TRACE, line.encode())
    except OSError:
        pass


def _open_mode_writes(mode, flags):
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) != 0


def _hook(event, args):
    if event == "open":
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if not isinstance(path, str):
            return
        path = os.path.abspath(path)
        if any(path.startswith(p) for p in _CRED_PATHS):
            _emit("credential_read", path=path)
        elif _open_mode_writes(mode, flags):
            _emit("file_write", path=path)
    elif event in ("socket.connect", "socket.sendto"):
        _emit("connect", address=str(args[1])[:200])
    elif event == "socket.getaddrinfo":
        _emit("lookup", host=str(args[0])[:255])
    elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
        _emit("process", event=event, argv=repr(args[:2])[:400], **_process(event, args))
    elif event in ("os.fork", "os.forkpty"):
        _emit("process", event=event, argv="")
    elif event == "ctypes.dlopen":
        _emit("native", event=event, detail=str(args[0])[:200])
    elif event == "compile" and not str(args[1]).endswith(".py"):
        # imports compile their .py files too; code compiled from a string is the signal
        _emit("dynamic_code", source=repr(args[0])[:200])
    elif event in ("os.rename", "os.symlink", "os.link", "os.chmod") and args:
        target = args[1] if event in ("os.rename", "os.symlink", "os.link") else args[0]
        if isinstance(target, str):
            _emit("file_write", path=os.path.abspath(target)[:300], event=event)


def _process(event, args):
    """The program, its arguments, and whether it runs through a shell or detached."""
    if event == "os.system":
        command = args[0].decode(errors="replace") if isinstance(args[0], bytes) else args[0]
        return {"program": "/bin/sh", "args": ["sh", "-c", str(command)[:300]], "shell": True}
    if event == "os.spawn":
        args = args[1:]
    program, argv = args[0], args[1] if len(args) > 1 else None
    argv = [str(a)[:100] for a in argv][:20] if isinstance(argv, (list, tuple)) else [str(argv)]
    if program is None:
        program = argv[0] if argv else ""
    program = os.fsdecode(program) if isinstance(program, bytes) else str(program)
    cwd = args[2] if event == "subprocess.Popen" and len(args) > 2 and args[2] else os.getcwd()
    return {"program": program[:300], "args": argv, "cwd": str(cwd)[:300], "detached": _detached()}


def _detached():
    """Whether the Popen being started gets a session or process group of its own."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "_execute_child":
            local = frame.f_locals
            group = local.get("process_group")
            setsid = local.get("preexec_fn") in (os.setsid, os.setpgrp)
            new_group = group is not None and group >= 0
            return bool(local.get("start_new_session") or new_group or setsid)
        frame = frame.f_back
    return False


#: each call runs on its own thread with its own clock offset, so that the calls run at once
#: (a handler that sleeps costs the budget once, not once per call)
_CLOCK = threading.local()


def _install_clock():
    def shifted_time():
        return _REAL_TIME() + getattr(_CLOCK, "offset", 0.0)

    class Date(datetime.date):
        @classmethod
        def today(cls):
            return datetime.date.fromtimestamp(shifted_time())

    class DateTime(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return _REAL_DATETIME.fromtimestamp(shifted_time(), tz)

        @classmethod
        def utcnow(cls):
            return _REAL_DATETIME.fromtimestamp(shifted_time(), datetime.UTC).replace(
                tzinfo=None
            )

        @classmethod
        def today(cls):
            return cls.now()

    datetime.date = Date
    datetime.datetime = DateTime
    time.time = shifted_time


_REAL_DATETIME = datetime.datetime


def _events():
    headers = {"content-type": "application/json", "user-agent": "curl/8.5.0"}
    return [
        {"method": "GET", "path": "/", "query": {}, "multiQuery": {}, "headers": headers,
         "body": None, "isBase64Encoded": False},
        {"method": "POST", "path": "/", "query": {}, "multiQuery": {}, "headers": headers,
         "body": {"id": 1, "items": [1, 2], "title": "test"}, "isBase64Encoded": False},
        {"source": "cron", "schedule": "*/5 * * * *", "time": ""},
    ]


def _offsets():
    now = datetime.date.today()
    to_weekday = 1
    while (now + datetime.timedelta(days=to_weekday)).weekday() >= 5:
        to_weekday += 1
    return [0.0, to_weekday * 86400.0, 31 * 86400.0, 366 * 86400.0]


class _Context:
    function = os.environ.get("SLESS_FUNCTION", "fn")
    namespace = os.environ.get("SLESS_NAMESPACE", "default")
    invocation_id = "detonation"
    deadline = 0.0

    def remaining_time(self):
        return 1.0


def _start_call(func, event, offset):
    def run():
        _CLOCK.offset = offset
        try:
            result = func(event, _Context())
            if hasattr(result, "__await__"):
                import asyncio

                asyncio.run(result)
        except BaseException as e:
            _emit("error", type=type(e).__name__)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _scope(event):
    body = event.get("body")
    data = b"" if body is None else json.dumps(body).encode()
    headers = [(k.encode(), v.encode()) for k, v in (event.get("headers") or {}).items()]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": event.get("method", "GET"), "scheme": "http", "path": event.get("path", "/"),
        "raw_path": event.get("path", "/").encode(), "query_string": b"", "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8080),
    }
    return scope, data


def _asgi(app):
    """An ASGI app called the way the serving adapter calls it, once per event."""

    async def call(event, context):
        scope, data = _scope(event)
        sent = []

        async def receive():
            if sent:
                import asyncio

                await asyncio.sleep(3600)  # the client stays: the budget ends the call
            sent.append(True)
            return {"type": "http.request", "body": data, "more_body": False}

        async def send(message):
            return None

        await app(scope, receive, send)

    return call


def _wsgi(app):
    """A WSGI app called with an environ for each event, its body iterated."""

    def call(event, context):
        import io

        scope, data = _scope(event)
        environ = {
            "REQUEST_METHOD": scope["method"], "PATH_INFO": scope["path"], "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8080", "SERVER_PROTOCOL": "HTTP/1.1",
            "SCRIPT_NAME": "", "CONTENT_LENGTH": str(len(data)), "wsgi.version": (1, 0),
            "CONTENT_TYPE": "application/json", "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr, "wsgi.url_scheme": "http", "wsgi.multithread": True,
            "wsgi.multiprocess": False, "wsgi.run_once": False,
        }
        for name, value in (event.get("headers") or {}).items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        result = app(environ, lambda status, headers, exc_info=None: None)
        try:
            for _ in result:
                pass
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()

    return call


def _as_called(func, interface):
    """The loaded entrypoint as ``(event, context)``: the interfaces whose code is an app
    (docs/migrating.md) get requests the way their serving adapter sends them, so the
    code that answers a request runs here too, not just the import."""
    if interface == "knative":
        instance = func()  # Knative's new(): the function object, its handle an ASGI app
        return _asgi(instance.handle)
    if interface == "asgi":
        return _asgi(func)
    if interface == "wsgi":
        return _wsgi(func)
    return func


class _StandInMeta(type):
    """Every name of a stand-in is another stand-in class; calling one makes an instance."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{cls.__name__}.{name}")

    def __call__(cls, *args, **kwargs):
        if _decorated(args, kwargs):
            return args[0]
        return super().__call__()

    def __iter__(cls):
        return iter(())

    def __getitem__(cls, key):
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __or__


class _StandIn(Exception, metaclass=_StandInMeta):
    """What a call into a missing dependency returns: anything asked of it is another
    stand-in, so the code goes on to what it does with the standard library (exceptions
    can be caught, classes subclassed, decorators keep the function they decorate)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{type(self).__name__}.{name}")

    def __call__(self, *args, **kwargs):
        return args[0] if _decorated(args, kwargs) else self

    def __iter__(self):
        return iter(())

    def __aiter__(self):
        return self

    async def __anext__(self):
        raise StopAsyncIteration

    def __await__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    def __getitem__(self, key):
        return self

    def __setitem__(self, key, value):
        pass

    def __len__(self):
        return 0

    def __contains__(self, item):
        return False

    def __str__(self):
        return ""

    def __int__(self):
        return 0

    def __float__(self):
        return 0.0


def _decorated(args, kwargs):
    return len(args) == 1 and not kwargs and isinstance(args[0], (type(_decorated), type))


def _stand_in(name):
    return _StandInMeta(name, (_StandIn,), {})


class _StandInFinder:
    """The last finder on ``sys.meta_path``: a module that nothing else finds, outside the
    standard library, is a stand-in. The upload's dependencies are installed after
    validation, so without this the import of any of them fails, the handler is never
    called and the detonation sees nothing of it (``import requests`` hid everything)."""

    def find_spec(self, name, path=None, target=None):
        import importlib.machinery

        if name.partition(".")[0] in sys.stdlib_module_names:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _emit("stand_in", module=module.__name__[:200])
        module.__path__ = []
        module.__getattr__ = lambda attr: (
            _raise_attribute(attr) if attr.startswith("__") else _stand_in(attr)
        )


def _raise_attribute(name):
    raise AttributeError(name)


class _Budget:
    """How long the code may run: ``budget`` seconds of the time it had, within ``ceiling``
    seconds of wall-clock time.

    The time it had is wall-clock time minus the time its threads waited for a CPU (the
    kernel's run-queue wait, ``/proc/self/task/*/schedstat``), so that a loaded machine
    gives the code the same run as a quiet one: a leak late in the run is seen, and a slow
    import finishes, whatever else the machine is doing. Time the code spends sleeping or
    waiting for the network counts, as on a quiet machine. The waits of threads that ran
    in the same interval are summed and capped at the interval (under the GIL one thread
    runs at a time). Code that makes itself wait (many busy threads) only stretches its
    own run up to the ceiling. Without schedstat the budget is wall-clock time.
    """

    def __init__(self, budget, ceiling):
        self.started = self.polled = _REAL_TIME()
        self.budget = budget
        self.ceiling = ceiling
        self.lost = 0.0
        self.waits = _run_queue_waits()

    def left(self):
        """Seconds left (<= 0: the budget is spent)."""
        now = _REAL_TIME()
        waits = _run_queue_waits()
        grown = sum(max(0, ns - self.waits.get(tid, 0)) for tid, ns in waits.items()) / 1e9
        self.lost += min(grown, max(0.0, now - self.polled))
        self.waits, self.polled = waits, now
        had = now - self.started - self.lost
        return min(self.budget - had, self.started + self.ceiling - now)

    def wait(self, thread):
        """Join ``thread`` until it ends or the budget does."""
        while thread.is_alive():
            left = self.left()
            if left <= 0:
                return
            thread.join(min(left, _POLL_S))


#: how often the budget looks at the run-queue waits while it waits for the code
_POLL_S = 0.02
# taken before the code runs, which may replace the os module's functions
_LISTDIR, _OPEN, _READ, _CLOSE = os.listdir, os.open, os.read, os.close


def _run_queue_waits():
    """Nanoseconds each thread of this process has waited for a CPU ({} if unknown)."""
    waits = {}
    try:
        tids = _LISTDIR("/proc/self/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            fd = _OPEN(f"/proc/self/task/{tid}/schedstat", os.O_RDONLY)
            try:
                waits[tid] = int(_READ(fd, 100).split()[1])
            finally:
                _CLOSE(fd)
        except (OSError, ValueError, IndexError):
            continue
    return waits


def _read_nonce():
    """The line on stdin (the run's nonce), read before the code runs; stdin is then
    /dev/null, so the code never reads it."""
    data = b""
    try:
        while not data.endswith(b"\n") and len(data) < 256:
            chunk = os.read(0, 256 - len(data))
            if not chunk:
                break
            data += chunk
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    except OSError:
        pass
    return data.decode(errors="replace").strip()


def _say_done(nonce, budget_left):
    # written directly, not through _emit: its cap and dedup are the code's to fill
    line = json.dumps({"kind": "done", "nonce": nonce, "budget_left": budget_left}) + "\n"
    try:
        os.write(_TRACE, line.encode())
    except OSError:
        pass


def main():
    global _TRACE, _CRED_PATHS
    nonce = _read_nonce()
    budget = _Budget(
        float(os.environ.pop("DETONATION_BUDGET_S", "1.5")),
        float(os.environ.pop("DETONATION_CEILING_S", "5")),
    )
    home = os.environ.get("HOME", "/tmp")
    files = json.loads(os.environ.pop("DETONATION_FILES", "{}"))
    for rel, content in files.items():
        path = os.path.join(home, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    _CRED_PATHS = tuple(os.path.join(home, rel) for rel in files)
    _TRACE = os.dup(1)
    os.dup2(2, 1)
    code_dir = os.environ.get("SLESS_CODE_DIR", "/code")
    deps = os.environ.get("SLESS_DEPS_DIR")
    sys.path[:0] = [code_dir] + ([deps] if deps else [])
    os.chdir(code_dir)
    _install_clock()
    sys.addaudithook(_hook)
    sys.meta_path.append(_StandInFinder())
    module_name, _, func_name = os.environ.get("SLESS_ENTRYPOINT", "handler.handle").rpartition(".")
    interface = os.environ.pop("DETONATION_INTERFACE", "sless")
    holder = {}

    def load():
        try:
            func = getattr(importlib.import_module(module_name), func_name)
            holder["func"] = _as_called(func, interface)
        except BaseException as e:
            _emit("error", type=type(e).__name__, at="import")

    loader = threading.Thread(target=load, daemon=True)
    loader.start()
    budget.wait(loader)
    if loader.is_alive():
        # the code was never called: what it does when called was not seen, so this run
        # does not count as finished (detonation-incomplete)
        _emit("unfinished", at="import")
        os._exit(0)
    func = holder.get("func")
    if func is not None:
        calls = [_start_call(func, e, offset) for offset in _offsets() for e in _events()]
        for thread in calls:
            budget.wait(thread)
    # threads the code started and left running (a leak sent after the call returned) run
    # on until they end or the budget does: returning early hides nothing
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            budget.wait(thread)
    _say_done(nonce, round(budget.left(), 3))
    os._exit(0)


if __name__ == "__main__":
    main()

"""The floor under a protocol-level front: uvloop and httptools, nothing else.

    python protocol_proxy.py [--work JOURNAL_DIR | --work-cheap JOURNAL_DIR] PORT SOCKET...

Serves every request on 127.0.0.1:PORT by one keep-alive exchange with a worker socket
(round robin over the sockets; an idle connection to it, a new one up to 16, or a wait in
line), with no ASGI server: the client side is an ``asyncio.Protocol`` on uvloop whose
bytes httptools parses in place, the worker side another whose answer httptools parses,
and everything runs on the event loop's one thread (no hand-over between threads, so no
GIL passing). It answers with the worker's status, headers and body. No authentication,
limits, header rules, record, journal, metrics or tracing: bench/invoke.py runs it in
front of the same workers as the gateway and nginx, beside bench/minimal_proxy.py (the
same floor under granian's ASGI server), so the difference between the two is what the
ASGI server costs per call.

With ``--work``, each call also does the platform's per-call work with the platform's
own code where that code stands alone: the route and the caller's token (SHA-256, the
way the gateway's token cache keys them) looked up in dicts, the tenant's in-flight count
checked and taken, an invocation id (``sless.gateway.invocation_ids``), the caller's
headers through ``sless.backends.headers.from_caller`` and ``to_function`` plus the
headers the platform adds (invocation id, deadline, ``X-Forwarded-For``,
``traceparent``), the request encoded by ``sless.backends.http1.encode_request``, the
answer's headers through ``from_function``, the metrics (``GatewayMetrics.record``) and
the record (``InvocationRecord.of_call`` into an ``InvocationRecorder`` with a journal:
one line and one ``write(2)`` per call; its queue is never written to a database). Its
CPU per call is what a protocol-level invoke path would cost: the floor plus the work.
Not a server to use.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import hashlib
import itertools
import os
import signal
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httptools
import uvloop

from sless.backends import headers as header_rule
from sless.backends.http1 import encode_request
from sless.gateway.invocation_ids import new_invocation_id
from sless.gateway.metrics import GatewayMetrics
from sless.store.invocations import InvocationRecord, InvocationRecorder

_REASONS = {200: b"OK", 404: b"Not Found", 500: b"Internal Server Error", 502: b"Bad Gateway"}
#: connections being made (a reference to each task until it ends)
_connecting: set[asyncio.Future[None]] = set()
_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length"}


class Upstream(asyncio.Protocol):
    """One keep-alive connection to a worker; one exchange at a time."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.done: Callable[[int, list[tuple[bytes, bytes]], bytes], None] | None = None
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, request: bytes, done: Callable[..., None]) -> None:
        self.done, self.headers, self.body = done, [], []
        self.transport.write(request)  # type: ignore[union-attr]

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() not in _HOP:
            self.headers.append((name, value))

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        done, self.done = self.done, None
        self.pool.release(self)
        done(self.parser.get_status_code(), self.headers, b"".join(self.body))  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        self.pool.lost(self)
        if self.done is not None:
            self.done(502, [], b"")


class Pool:
    """At most ``MAX_CONNECTIONS`` keep-alive connections to one worker socket (as the
    gateway holds at most ``concurrency``); a request finding none free waits its turn."""

    MAX_CONNECTIONS = 16

    def __init__(self, path: str) -> None:
        self.path = path
        self.idle: list[Upstream] = []
        self.open = 0
        self.waiting: collections.deque[tuple[bytes, Callable[..., None]]] = collections.deque()

    def send(self, request: bytes, done: Callable[..., None]) -> None:
        if self.idle:
            self.idle.pop().send(request, done)
        elif self.open < self.MAX_CONNECTIONS:
            self.open += 1
            task = asyncio.ensure_future(self._connect(request, done))
            _connecting.add(task)
            task.add_done_callback(_connecting.discard)
        else:
            self.waiting.append((request, done))

    async def _connect(self, request: bytes, done: Callable[..., None]) -> None:
        try:
            _, upstream = await asyncio.get_running_loop().create_unix_connection(
                lambda: Upstream(self), self.path
            )
        except OSError:
            self.open -= 1
            done(502, [], b"")
            return
        upstream.send(request, done)

    def release(self, upstream: Upstream) -> None:
        if self.waiting:
            upstream.send(*self.waiting.popleft())
        else:
            self.idle.append(upstream)

    def lost(self, upstream: Upstream) -> None:
        self.open -= 1
        if upstream in self.idle:
            self.idle.remove(upstream)


class Work:
    """The platform's per-call work, as the invoke path does it (see the docstring)."""

    def __init__(self, journal_dir: Path) -> None:
        self.routes = {"/": ("sless-bench", "hello")}
        self.tokens = {hashlib.sha256(b"").digest(): "sless-bench"}
        self.in_flight = {"sless-bench": 0}
        self.metrics = GatewayMetrics(max_functions_per_namespace=50)
        journal_dir.mkdir(parents=True, exist_ok=True)
        self.recorder = InvocationRecorder(None, journal_dir=journal_dir)  # type: ignore[arg-type]
        self.recorder.journal.open()  # type: ignore[union-attr]

    def drain(self) -> None:
        """Take the queued records away every 0.2 s, as the recorder's writer would (the
        database's part of the work is not measured here)."""
        self.recorder._queue.clear()
        asyncio.get_running_loop().call_later(0.2, self.drain)

    def request(
        self, url: bytes, fields: list[tuple[bytes, bytes]], peer: str
    ) -> tuple[bytes, Callable[[int, list[tuple[bytes, bytes]], int], list[tuple[bytes, bytes]]]]:
        started, clock = datetime.now(UTC), time.perf_counter()
        target = url.decode("latin-1")
        namespace, name = self.routes[target]
        decoded = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in fields]
        token = next((v for k, v in decoded if k.lower() == "authorization"), "")
        self.tokens.get(hashlib.sha256(token.encode()).digest())
        if self.in_flight[namespace] >= 1000:
            raise RuntimeError("too many calls")
        self.in_flight[namespace] += 1
        call = new_invocation_id()
        sent = header_rule.to_function(header_rule.from_caller(decoded))
        sent += [
            ("x-sless-invocation-id", str(call)),
            ("x-sless-deadline", f"{time.time() + 30:.3f}"),
            ("x-forwarded-for", peer),
            ("traceparent", f"00-{call.hex}-{call.hex[:16]}-01"),
        ]
        request = encode_request("GET", target, "worker", sent, b"")

        def answered(
            status: int, answer: list[tuple[bytes, bytes]], size: int
        ) -> list[tuple[bytes, bytes]]:
            self.in_flight[namespace] -= 1
            seconds = time.perf_counter() - clock
            self.metrics.record(namespace, name, status, seconds)
            self.recorder.record(
                InvocationRecord.of_call(
                    call, namespace, name, status=status, duration_ms=seconds * 1000,
                    request_bytes=0, response_bytes=size, started_at=started, version="v1",
                )
            )  # fmt: skip
            return header_rule.from_function(answer)

        return request, answered


#: the caller's fields that never reach a function, as bytes (``sless.backends.headers``)
_NOT_FROM_CALLER = frozenset(name.encode() for name in header_rule._NOT_FROM_CALLER)
_NOT_FROM_FUNCTION = frozenset(name.encode() for name in header_rule._NOT_FROM_FUNCTION)
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)


class CheapWork(Work):
    """The same steps written for a protocol-level path (``--work cheap``): the header rules
    in one pass over the parsed bytes (httptools has already refused a malformed field),
    the request head joined from bytes, the id as hex from the pool of random bytes,
    counters and a latency bucket as plain integers, the record a tuple and its journal
    line formatted from it with one ``write(2)``. What the same work costs when it is
    designed for this path rather than carried over from the ASGI one."""

    def __init__(self, journal_dir: Path) -> None:
        super().__init__(journal_dir)
        self.counts: dict[tuple[str, str, int], int] = {}
        self.buckets = [0] * (len(_SECONDS) + 1)
        self.pool, self.taken = b"", 4096
        self.fd = os.open(journal_dir / "cheap.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        self.queue: collections.deque[tuple[object, ...]] = collections.deque()

    def drain(self) -> None:
        self.queue.clear()
        super().drain()

    def request(
        self, url: bytes, fields: list[tuple[bytes, bytes]], peer: str
    ) -> tuple[bytes, Callable[[int, list[tuple[bytes, bytes]], int], list[tuple[bytes, bytes]]]]:
        clock = time.perf_counter()
        started = time.time()
        namespace, name = self.routes[url.decode("latin-1")]
        token = b""
        named: set[bytes] = set()
        kept = []
        for key, value in fields:
            lower = key.lower()
            if lower == b"authorization":
                token = value
            elif lower == b"connection":
                named.update(part.strip().lower() for part in value.split(b","))
            if lower not in _NOT_FROM_CALLER and not lower.startswith(b"x-sless-"):
                kept.append((lower, value))
        self.tokens.get(hashlib.sha256(token).digest())
        if self.in_flight[namespace] >= 1000:
            raise RuntimeError("too many calls")
        self.in_flight[namespace] += 1
        if self.taken + 16 > len(self.pool):
            self.pool, self.taken = os.urandom(4096), 0
        call = self.pool[self.taken : self.taken + 16].hex()
        self.taken += 16
        head = [b"GET ", url, b" HTTP/1.1\r\nhost: worker\r\n"]
        for key, value in kept:
            if key not in named:
                head += (key, b": ", value, b"\r\n")
        head.append(
            b"x-sless-invocation-id: %s\r\nx-sless-deadline: %.3f\r\nx-forwarded-for: %s\r\n"
            b"traceparent: 00-%s-%s-01\r\ncontent-length: 0\r\n\r\n"
            % (call.encode(), started + 30, peer.encode(), call.encode(), call[:16].encode())
        )

        def answered(
            status: int, answer: list[tuple[bytes, bytes]], size: int
        ) -> list[tuple[bytes, bytes]]:
            self.in_flight[namespace] -= 1
            seconds = time.perf_counter() - clock
            key = (namespace, name, status)
            self.counts[key] = self.counts.get(key, 0) + 1
            self.buckets[bisect.bisect_left(_SECONDS, seconds)] += 1
            record = (call, namespace, name, status, seconds * 1000, 0, size, started)
            self.queue.append(record)
            line = f'["{call}","{namespace}","{name}",{status},{seconds * 1000!r},0,{size},'
            os.write(self.fd, f"{line}{started!r}]\n".encode())
            return [
                (key, value)
                for key, value in answer
                if (lower := key.lower()) not in _NOT_FROM_FUNCTION
                and not lower.startswith(b"x-sless-")
            ]

        return b"".join(head), answered


class Client(asyncio.Protocol):
    """One client connection; requests answered in order, one at a time."""

    def __init__(self, pick: Callable[[], Pool], work: Work | None) -> None:
        self.pick = pick
        self.work = work
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.url = b""
        self.fields: list[tuple[bytes, bytes]] = []
        self.peer = ""
        self.answered: Callable[..., list[tuple[bytes, bytes]]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.peer = transport.get_extra_info("peername")[0]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.close()  # type: ignore[union-attr]

    def on_url(self, url: bytes) -> None:
        self.url, self.fields = url, []

    def on_header(self, name: bytes, value: bytes) -> None:
        self.fields.append((name, value))

    def on_message_complete(self) -> None:
        pool = self.pick()
        if self.work is not None:
            request, self.answered = self.work.request(self.url, self.fields, self.peer)
        else:
            request = b"GET " + self.url + b" HTTP/1.1\r\nHost: worker\r\n\r\n"
        pool.send(request, self.answer)

    def answer(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        if self.answered is not None:
            headers, self.answered = self.answered(status, headers, len(body)), None
        head = [b"HTTP/1.1 %d %s\r\n" % (status, _REASONS.get(status, b"Unknown"))]
        head += [name + b": " + value + b"\r\n" for name, value in headers]
        head.append(b"content-length: %d\r\n\r\n" % len(body))
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(head) + body)


def main() -> None:
    args = sys.argv[1:]
    work = None
    if args[0] in ("--work", "--work-cheap"):
        work = (Work if args[0] == "--work" else CheapWork)(Path(args[1]))
        args = args[2:]
    port, sockets = int(args[0]), args[1:]
    pools = itertools.cycle([Pool(path) for path in sockets])

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: Client(pools.__next__, work), "127.0.0.1", port)
        if work is not None:
            work.drain()
        stop = loop.create_future()
        loop.add_signal_handler(signal.SIGTERM, lambda: stop.done() or stop.set_result(None))
        await stop
        server.close()

    uvloop.run(serve())


if __name__ == "__main__":
    main()

"""Warm workers for embedded mode: one pool per function, sized by demand.

Each worker is a sandboxed runtime process serving HTTP on its own Unix socket; the pool
keeps an ``Http1Client`` per worker (keep-alive connections) and sends a worker at most
``concurrency`` calls at once. A pool starts workers on demand up to ``max_workers``,
keeps ``min_instances`` warm, reaps workers idle for longer than the idle timeout, kills a
worker whose call timed out and replaces a worker that crashed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import TracebackType

from sless.backends.base import Upstream
from sless.backends.http1 import Connection, Http1Client
from sless.errors import TooManyRequests
from sless.models import FunctionSpec
from sless.sandbox import Worker
from sless.tasks import spawn, wait_for

log = logging.getLogger(__name__)

WorkerFactory = Callable[[int], Awaitable[Worker]]


@dataclass(eq=False)
class _Slot:
    worker: Worker
    client: Http1Client
    inflight: int = 0
    last_used: float = field(default_factory=time.monotonic)

    @property
    def alive(self) -> bool:
        return self.worker.returncode is None


class FunctionPool:
    """The workers of one version of one function."""

    def __init__(
        self,
        name: str,
        spec: FunctionSpec,
        version: str,
        factory: WorkerFactory,
        *,
        max_workers: int,
        queue_timeout_s: float = 10.0,
        note: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        #: appends the platform's lines to the function's log (why a call died)
        self.note = note
        self.spec = spec
        self.version = version
        self._factory = factory
        self.max_workers = max(max_workers, spec.min_instances, 1)
        self.queue_timeout_s = queue_timeout_s
        #: mean duration of recent calls (seconds, exponentially weighted): Retry-After
        self._mean_call_s = 1.0
        self._slots: list[_Slot] = []
        self._starting = 0
        self._cond = asyncio.Condition()
        #: tasks waiting on ``_cond`` (for room, or for the calls to end at close)
        self._waiting = 0
        self._closed = False
        self._serial = 0
        #: time.monotonic() until which one worker stays up even with min_instances 0
        self._warm_until = 0.0
        #: run after the workers stopped (e.g. the version's egress proxy)
        self.on_close: list[Callable[[], Awaitable[None]]] = []
        #: counters for tests and metrics
        self.started = 0
        self.crashed = 0
        self.killed_on_timeout = 0
        #: calls refused because max_workers were all busy for queue_timeout_s
        self.throttled = 0

    @property
    def size(self) -> int:
        return len(self._slots)

    def worker_pids(self) -> set[int]:
        """Host pids of the pool's workers (their bubblewrap processes)."""
        return {slot.worker.pid for slot in self._slots}

    @property
    def inflight(self) -> int:
        return sum(slot.inflight for slot in self._slots)

    async def _start_slot(self) -> _Slot:
        self._serial += 1
        worker = await self._factory(self._serial)
        # no cookie jar, no redirects, no decompression: what the worker answers is what
        # the caller gets, and nothing of one caller's answer rides along on the next call
        client = Http1Client.unix(str(worker.socket_path), max_idle=self.spec.concurrency)
        self.started += 1
        return _Slot(worker=worker, client=client)

    async def _discard(self, slot: _Slot, *, kill: bool) -> None:
        if slot in self._slots:
            self._slots.remove(slot)
        await slot.client.close()
        if kill:
            slot.worker.kill()
        await slot.worker.stop()

    def _prune_dead(self) -> list[_Slot]:
        dead = [slot for slot in self._slots if not slot.alive]
        for slot in dead:
            self._slots.remove(slot)
            self.crashed += 1
            log.warning("worker %s exited (code %s)", slot.worker.name, slot.worker.returncode)
        return dead

    def _throttle(self) -> TooManyRequests:
        self.throttled += 1
        retry_after = min(60, max(1, math.ceil(self._mean_call_s)))
        return TooManyRequests(
            f"function {self.name.rpartition('/')[2]!r} is at its max_instances "
            f"({self.max_workers}) and no instance was free within "
            f"{self.queue_timeout_s:g}s",
            retry_after=retry_after,
        )

    def _free_slot(self) -> _Slot | None:
        """The least busy live worker with room, taken at once, or None.

        No lock and no ``await``: the event loop runs nothing else between the look and
        the count, so two calls never take the same room. A dead worker, a closed pool or
        no room anywhere sends the call to ``_acquire``'s slow path, under the condition.
        """
        if self._closed:
            return None
        best: _Slot | None = None
        room = self.spec.concurrency
        for slot in self._slots:
            if slot.worker.returncode is not None:
                return None  # pruned (and its client closed) under the lock
            if slot.inflight < room and (best is None or slot.inflight < best.inflight):
                best = slot
        if best is not None:
            best.inflight += 1
        return best

    async def _acquire(self) -> tuple[_Slot, bool]:
        """A slot with room for one more call, and whether it was started for it."""
        slot = self._free_slot()
        if slot is not None:
            return slot, False
        deadline = time.monotonic() + self.queue_timeout_s
        while True:
            async with self._cond:
                if self._closed:
                    raise RuntimeError("pool closed")
                for slot in self._prune_dead():
                    await slot.client.close()
                free = [s for s in self._slots if s.inflight < self.spec.concurrency]
                if free:
                    slot = min(free, key=lambda s: s.inflight)
                    slot.inflight += 1
                    return slot, False
                if len(self._slots) + self._starting < self.max_workers:
                    self._starting += 1
                    break
                if self._starting:
                    # a worker on its way counts as capacity: the queue time starts when
                    # every instance runs (a start is bounded by the start timeout)
                    deadline = time.monotonic() + self.queue_timeout_s
                    with self._waiter():
                        await self._cond.wait()
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._throttle()
                # woken by every call that ends and every worker that starts or stops
                with self._waiter(), contextlib.suppress(TimeoutError):
                    await wait_for(self._cond.wait(), remaining)
        try:
            slot = await self._start_slot()
        except BaseException:
            async with self._cond:
                self._starting -= 1
                self._cond.notify_all()
            raise
        async with self._cond:
            # one step: a waiter never sees the start over and the worker not yet there
            self._starting -= 1
            self._cond.notify_all()
            if self._closed:
                await self._discard(slot, kill=True)
                raise RuntimeError("pool closed")
            slot.inflight += 1
            self._slots.append(slot)
            return slot, True

    @contextlib.contextmanager
    def _waiter(self) -> Iterator[None]:
        """Count a wait on ``_cond``: a call that ends takes the lock to wake waiters only
        if there are any. Counted at once, under the lock, before the wait's task starts:
        a call ending in between still sees the waiter."""
        self._waiting += 1
        try:
            yield
        finally:
            self._waiting -= 1

    def lease(self) -> AbstractAsyncContextManager[Upstream]:
        return _Lease(self)

    def lease_now(self) -> HeldLease | None:
        """A worker with room and one of its idle connections, taken at once (no
        ``await``), or None: the call then leases the usual way (``lease``)."""
        slot = self._free_slot()
        if slot is None:
            return None
        connection = slot.client.take_idle()
        if connection is None:
            slot.inflight -= 1
            return None
        upstream = Upstream(client=slot.client, ending=slot.worker.ending, note=self.note)
        return HeldLease(self, slot, upstream, connection)

    async def _release(self, slot: _Slot, upstream: Upstream, started: float) -> None:
        if self._ended(slot, upstream, started):
            await self._after_call(slot, upstream)

    def _ended(self, slot: _Slot, upstream: Upstream, started: float) -> bool:
        """Count the call's end; True when the lock is needed (a worker to discard, or
        calls waiting for room to wake)."""
        slot.inflight -= 1
        slot.last_used = time.monotonic()
        self._mean_call_s += 0.2 * (slot.last_used - started - self._mean_call_s)
        broken = upstream.timed_out or (upstream.failed and not slot.alive)
        # the common case: nobody to wake, nothing to discard, no lock
        return broken or bool(self._waiting)

    async def _after_call(self, slot: _Slot, upstream: Upstream) -> None:
        async with self._cond:
            if upstream.timed_out:
                # the handler is stuck: only killing the process frees it
                self.killed_on_timeout += 1
                await self._discard(slot, kill=True)
            elif upstream.failed and not slot.alive:
                self.crashed += 1
                await self._discard(slot, kill=False)
            self._cond.notify_all()

    async def ensure_warm(self) -> None:
        """Start workers until ``min_instances`` are running."""
        await self._grow_to(self.spec.min_instances)

    async def keep_warm_until(self, deadline: float) -> None:
        """Start a worker now, if none runs, and keep one until ``deadline`` (monotonic).

        A cron trigger's ``prewarm_s`` uses it so that a scheduled call meets a warm
        worker; afterwards the worker is reaped like any idle one.
        """
        self._warm_until = max(self._warm_until, deadline)
        await self._grow_to(max(1, self.spec.min_instances))

    async def _grow_to(self, target: int) -> None:
        while not self._closed:
            async with self._cond:
                for slot in self._prune_dead():
                    await slot.client.close()
                if len(self._slots) + self._starting >= target:
                    return
                self._starting += 1
            try:
                slot = await self._start_slot()
            finally:
                async with self._cond:
                    self._starting -= 1
            async with self._cond:
                if self._closed:  # closed while it started: nobody else would stop it
                    await self._discard(slot, kill=True)
                    return
                self._slots.append(slot)
                self._cond.notify_all()

    async def reap_idle(self, idle_timeout_s: float) -> int:
        now = time.monotonic()
        reaped = 0
        keep = max(self.spec.min_instances, 1 if now < self._warm_until else 0)
        async with self._cond:
            for slot in self._prune_dead():
                await slot.client.close()
            for slot in sorted(self._slots, key=lambda s: s.last_used):
                if len(self._slots) <= keep:
                    break
                if slot.inflight == 0 and now - slot.last_used > idle_timeout_s:
                    await self._discard(slot, kill=False)
                    reaped += 1
        return reaped

    async def close(self, grace_s: float = 5.0) -> None:
        """Stop every worker, letting in-flight calls finish for up to ``grace_s``."""
        deadline = time.monotonic() + grace_s
        async with self._cond:
            self._closed = True
            while self.inflight and time.monotonic() < deadline:
                with self._waiter(), contextlib.suppress(TimeoutError):
                    await wait_for(self._cond.wait(), deadline - time.monotonic())
            slots = list(self._slots)
            self._slots.clear()
        for slot in slots:
            await slot.client.close()
            await slot.worker.stop()
        for closer in self.on_close:
            await closer()


class _Lease:
    """One call's hold on a worker: ``async with pool.lease() as upstream``.

    A class rather than an ``asynccontextmanager`` generator: the lease is on every call,
    and a generator-based context manager costs a generator, its frames and two extra
    ``await`` hops per call (a profile under wrk showed them)."""

    __slots__ = ("_pool", "_slot", "_started", "_upstream")

    def __init__(self, pool: FunctionPool) -> None:
        self._pool = pool

    async def __aenter__(self) -> Upstream:
        pool = self._pool
        slot, cold = await pool._acquire()
        self._slot = slot
        self._upstream = Upstream(
            client=slot.client, ending=slot.worker.ending, note=pool.note, cold=cold
        )
        self._started = time.monotonic()
        return self._upstream

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._pool._release(self._slot, self._upstream, self._started)


class HeldLease:
    """A lease taken without waiting (``FunctionPool.lease_now``): the worker's room and
    one idle connection to it, held until ``release`` (or ``undo``, before anything was
    sent). The express path's counterpart of ``_Lease`` (sless.gateway.express)."""

    __slots__ = ("_pool", "_released", "_slot", "_started", "connection", "upstream")

    def __init__(
        self, pool: FunctionPool, slot: _Slot, upstream: Upstream, connection: Connection
    ) -> None:
        self._pool = pool
        self._slot = slot
        self.upstream = upstream
        self.connection = connection
        self._started = time.monotonic()
        self._released = False

    def undo(self) -> None:
        """Nothing was sent: the room and the connection go back as they were."""
        self._slot.inflight -= 1
        self._slot.client.give_back(self.connection, clean=True)

    def release(self, *, clean: bool) -> None:
        """The call is over: its connection is kept if ``clean`` and whole, the room is
        given back; a worker to discard or waiters to wake take a task of their own."""
        if self._released:  # once: a second release would give back room not held
            return
        self._released = True
        pool, slot, upstream = self._pool, self._slot, self.upstream
        slot.client.give_back(self.connection, clean=clean)
        if pool._ended(slot, upstream, self._started):
            spawn(pool._after_call(slot, upstream), name="sless-pool-release")

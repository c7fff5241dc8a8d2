"""The worker pool's lease: the lock-free path takes room at once, and a call that ends
wakes a call waiting for room, whatever the moment it started to wait.

The workers are stand-ins at the pool's own boundary (its ``WorkerFactory``): what is
tested is the pool's bookkeeping; no call is sent (the real path is in
tests/integration/test_autoscaling.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sless.backends.local.pooling import FunctionPool
from sless.errors import TooManyRequests
from sless.models import FunctionSpec


class _StandIn:
    def __init__(self, serial: int) -> None:
        self.name = f"w{serial}"
        self.pid = 1_000_000 + serial
        self.socket_path = Path(f"/nonexistent/{serial}.sock")
        self.returncode: int | None = None
        self.stopped = False

    async def ending(self) -> None:
        return None

    def kill(self) -> None:
        self.returncode = -9

    async def stop(self) -> None:
        self.stopped = True
        if self.returncode is None:
            self.returncode = 0


def _pool(*, concurrency: int, max_workers: int, queue_timeout_s: float) -> FunctionPool:
    async def factory(serial: int) -> _StandIn:
        return _StandIn(serial)

    spec = FunctionSpec(concurrency=concurrency, max_instances=max_workers)
    return FunctionPool(
        "t/f", spec, "v1", factory, max_workers=max_workers, queue_timeout_s=queue_timeout_s
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5])
async def test_a_call_ending_wakes_a_waiting_call_at_any_interleaving(steps: int) -> None:
    """The full pool's waiter is counted before its wait starts: the ending call, which
    skips the lock when nobody waits, still wakes it (else it waits out the queue
    timeout, longer than the test's own timeout, though a worker is free)."""
    pool = _pool(concurrency=1, max_workers=1, queue_timeout_s=600)
    first = pool.lease()
    await first.__aenter__()
    got: list[int] = []

    async def second() -> None:
        async with pool.lease():
            got.append(pool.inflight)

    waiter = asyncio.create_task(second())
    for _ in range(steps):
        await asyncio.sleep(0)
    await first.__aexit__(None, None, None)
    await waiter
    assert got == [1]
    assert pool.inflight == 0
    assert pool.size == 1
    assert pool.started == 1
    await pool.close()


async def test_the_lock_free_path_spreads_calls_and_stops_at_the_bound() -> None:
    pool = _pool(concurrency=2, max_workers=2, queue_timeout_s=0.05)
    leases = [pool.lease() for _ in range(4)]
    for lease in leases:
        await lease.__aenter__()
    assert pool.size == 2
    assert pool.inflight == 4
    with pytest.raises(TooManyRequests):
        async with pool.lease():
            pass
    assert pool.throttled == 1
    for lease in leases:
        await lease.__aexit__(None, None, None)
    assert pool.inflight == 0
    await pool.close()


async def test_a_dead_worker_is_not_leased_by_the_lock_free_path() -> None:
    pool = _pool(concurrency=4, max_workers=2, queue_timeout_s=1.0)
    async with pool.lease():
        pass
    (dead,) = pool._slots
    dead.worker.kill()
    async with pool.lease() as upstream:
        assert upstream.client is not dead.client
    assert pool.crashed == 1
    assert all(slot.worker.returncode is None for slot in pool._slots)
    await pool.close()


async def test_close_waits_for_the_calls_in_flight() -> None:
    pool = _pool(concurrency=1, max_workers=1, queue_timeout_s=1.0)
    lease = pool.lease()
    await lease.__aenter__()
    # a grace longer than the test's timeout: a missed wake-up fails the test
    closing = asyncio.create_task(pool.close(grace_s=600))
    await asyncio.sleep(0)
    assert not closing.done()
    await lease.__aexit__(None, None, None)
    await closing  # woken by the call's end
    assert pool.size == 0


async def test_a_worker_started_while_the_pool_closes_is_stopped() -> None:
    # ensure_warm was starting a worker when the pool closed: it used to join the closed
    # pool's slots, where nothing would ever stop it (its process outlived the gateway)
    started, release = asyncio.Event(), asyncio.Event()
    workers: list[_StandIn] = []

    async def factory(serial: int) -> _StandIn:
        started.set()
        await release.wait()
        workers.append(_StandIn(serial))
        return workers[-1]

    spec = FunctionSpec(concurrency=1, min_instances=1)
    pool = FunctionPool("ns/f", spec, "v1", factory, max_workers=1)  # type: ignore[arg-type]
    warming = asyncio.create_task(pool.ensure_warm())
    await started.wait()
    await pool.close(grace_s=0)
    release.set()
    await warming
    assert [w.stopped for w in workers] == [True]
    assert pool.size == 0

"""``cancel_and_wait``: the tasks end, their errors stay theirs, and a cancellation of the
caller reaches the caller."""

from __future__ import annotations

import asyncio
import contextlib
import gc

import pytest

from sless.tasks import cancel_and_wait, wait_for


async def _forever() -> None:
    await asyncio.Event().wait()


async def _slow_to_end(ended: asyncio.Event, release: asyncio.Event) -> None:
    try:
        await asyncio.Event().wait()
    finally:
        await release.wait()  # its own cleanup takes a while
        ended.set()


async def _fails_when_cancelled() -> None:
    try:
        await asyncio.Event().wait()
    finally:
        raise RuntimeError("failed while stopping")


async def test_every_task_is_cancelled_and_has_ended() -> None:
    tasks = [asyncio.create_task(_forever()) for _ in range(3)]
    await asyncio.sleep(0)
    await cancel_and_wait([*tasks, None])
    assert all(task.cancelled() for task in tasks)


async def test_a_task_that_fails_does_not_fail_the_stop_and_is_retrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = asyncio.create_task(_fails_when_cancelled())
    await asyncio.sleep(0)
    await cancel_and_wait([task])
    assert isinstance(task.exception(), RuntimeError)
    del task
    gc.collect()
    assert "never retrieved" not in caplog.text


async def test_a_stop_cancelled_while_it_waits_is_cancelled() -> None:
    ended, release = asyncio.Event(), asyncio.Event()
    owned = asyncio.create_task(_slow_to_end(ended, release))
    await asyncio.sleep(0)
    stop = asyncio.create_task(cancel_and_wait([owned]))
    await asyncio.sleep(0)
    assert not stop.done()
    stop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stop
    assert not ended.is_set()  # the stop did not wait for the task's cleanup
    release.set()
    await asyncio.wait_for(ended.wait(), 1)  # which still ends on its own
    assert owned.cancelled()


async def test_nothing_to_stop() -> None:
    await cancel_and_wait([])
    await cancel_and_wait([None])


async def _a_loop_waking_on(event: asyncio.Event, wait) -> None:
    # a background loop's shape (polling, the recorder, the schedulers): wait for work or
    # the poll interval, then go round again
    while True:
        with contextlib.suppress(TimeoutError):
            await wait(event.wait(), 3600)
        event.clear()


@pytest.mark.parametrize(
    "wait",
    [
        wait_for,
        pytest.param(
            asyncio.wait_for,
            marks=pytest.mark.xfail(
                reason="Python 3.11's asyncio.wait_for returns the result when the awaited "
                "thing finished in the same turn as the cancellation: the loop goes round "
                "again, cancelled, forever, and a stop waiting for it hangs",
                strict=True,
            ),
        ),
    ],
)
async def test_a_cancellation_that_meets_the_awaited_result_is_not_lost(wait) -> None:
    event = asyncio.Event()
    loop = asyncio.create_task(_a_loop_waking_on(event, wait))
    await asyncio.sleep(0.01)
    event.set()  # work arrives ...
    loop.cancel()  # ... as the platform stops
    done, _ = await asyncio.wait([loop], timeout=2)
    if not done:
        loop.cancel()  # the second cancel of a stuck loop ends the test cleanly
        with contextlib.suppress(asyncio.CancelledError):
            await loop
    assert loop in done
    assert loop.cancelled()


async def test_wait_for_times_out_and_returns_as_asyncio_wait_for_does() -> None:
    assert await wait_for(asyncio.sleep(0, "answer"), 1) == "answer"
    with pytest.raises(TimeoutError):
        await wait_for(asyncio.Event().wait(), 0.01)
    assert await wait_for(asyncio.sleep(0, 7), None) == 7

"""Asynchronous invocations: a durable queue in PostgreSQL and its workers.

``enqueue`` stores the call and wakes this process's worker; workers of every gateway
process also poll, so a call queued by one gateway can run on another. A call is tried up
to ``max_attempts`` times: an answer below 500 ends it (``succeeded``, or ``failed`` for
a 4xx, which a retry would not change); a 5xx, a timeout or a function that is not ready
is retried after ``retry_base_s * 2**(attempt-1)`` (at most ``retry_max_s``), and after the
last attempt the call is ``dead`` (dead-lettered, kept for inspection). The invocation
record is written once, when the call ends, under the id the 202 answer gave, in the
transaction that writes the final state.

Never run twice, never silently lost (``sless.store.queue``): each attempt is stamped
dispatched in PostgreSQL before it is sent, and only the attempt holding the row's lease
writes its outcome. A call whose worker's process stopped after the dispatch ends
``interrupted`` when its lease runs out (at once when this process starts as the
database's only user, ``recover_at_start``), with its invocation record and callback; one
taken but never dispatched runs. A call cut by a clean stop before its dispatch is given
back at once.

When the call ends and its function has a ``callback_url``, the callback is sent in a
task of its own (``sless.events.callbacks``), so a slow receiver never holds a queue slot;
its outcome is stored with the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sless.backends import Backend, Tracing
from sless.config import EventsSettings
from sless.events.callbacks import CallbackSender, callback_document
from sless.events.calling import invoke, outcome_record
from sless.events.polling import PollingWorker
from sless.models import IPNetwork
from sless.store import (
    INTERRUPTED,
    TRANSIENT_DB_ERRORS,
    QueuedCall,
    QueueRepository,
    SecretRepository,
)
from sless.tasks import cancel_and_wait

log = logging.getLogger(__name__)

ASYNC_TRIGGER = "async"


class InvocationQueue(PollingWorker):
    name = "invocation-queue"

    def __init__(
        self,
        settings: EventsSettings,
        backend: Backend,
        queue: QueueRepository,
        secrets: SecretRepository,
        *,
        recover_at_start: bool = False,
        tracing: Tracing | None = None,
        private_allowed: Sequence[IPNetwork] = (),
    ) -> None:
        super().__init__(settings.poll_interval_s)
        #: each attempt continues the trace stored with its call (sless.backends.tracing)
        self.tracing = tracing
        #: this process is the database's only user: every running call is a dead one's
        self._recover_all = recover_at_start
        self.settings = settings
        self.backend = backend
        self.queue = queue
        self._slots = asyncio.Semaphore(settings.queue_concurrency)
        self.callbacks = CallbackSender(
            backend,
            secrets,
            retry_base_s=settings.retry_base_s,
            retry_max_s=settings.retry_max_s,
            private_allowed=private_allowed,
        )
        self._calling_back: set[asyncio.Task[None]] = set()

    async def stop(self, grace_s: float) -> None:
        await super().stop(grace_s)
        if self._calling_back:
            # callbacks under way finish within the grace or are dropped (at most once)
            _, pending = await asyncio.wait(self._calling_back, timeout=grace_s)
            await cancel_and_wait(pending)

    async def enqueue(self, call: QueuedCall, *, max_pending: int | None = None) -> None:
        """Queue ``call`` with this queue's ``max_attempts`` (or fewer, when the caller
        asked for fewer: ``X-Sless-Retries``), and wake a worker."""
        limit = self.settings.max_attempts
        asked = call.max_attempts
        call = dataclasses.replace(
            call, attempts=0, max_attempts=min(asked, limit) if asked > 0 else limit
        )
        await self.queue.enqueue(call, max_pending=max_pending)
        self._wake.set()

    async def run_once(self) -> int:
        """End the calls interrupted by a stopped worker, then take as many due calls as
        there are free slots and start them."""
        for call in await self.queue.interrupt(all_running=self._recover_all):
            log.warning(
                "async call %s of %s/%s interrupted: its gateway stopped after dispatching"
                " it; not run again",
                call.id,
                call.namespace,
                call.function,
            )
            self._start_callback(call)
        self._recover_all = False
        taken = 0
        while True:
            free = self.settings.queue_concurrency - len(self._running)
            if free <= 0:
                return taken
            calls = await self.queue.take(free)
            for call in calls:
                task = asyncio.create_task(self._attempt(call))
                self._running.add(task)
                task.add_done_callback(self._done)
            taken += len(calls)
            if len(calls) < free:
                return taken

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        # a slot is free: due calls may be waiting for it
        self._wake.set()

    async def _attempt(self, taken: QueuedCall) -> None:
        try:
            await self._attempt_once(taken)
        except TRANSIENT_DB_ERRORS as e:
            # the database stayed away: the lease runs out and the call is taken over
            # (run if it was not dispatched, else interrupted)
            log.warning("async call %s: its state could not be written: %s", taken.id, e)

    async def _attempt_once(self, taken: QueuedCall) -> None:
        try:
            call = await self.queue.dispatch(taken)
        except asyncio.CancelledError:
            # stopping before the dispatch: the call never ran, give it back now
            with contextlib.suppress(Exception):
                await asyncio.shield(self.queue.release(taken))
            raise
        if call is None:
            log.warning("async call %s: its lease was lost before the dispatch", taken.id)
            return
        last = call.attempts >= call.max_attempts
        outcome = await invoke(
            self.backend,
            call.namespace,
            call.function,
            invocation_id=call.id,
            method=call.method,
            path=call.path,
            headers=call.headers,
            body=call.body,
            version=call.version,
            tracing=self.tracing,
            trigger=ASYNC_TRIGGER,
            traceparent=call.traceparent,
        )
        retry = outcome.retryable and not last
        result, truncated = outcome.bounded(self.settings.max_result_bytes)
        if retry:
            state = "queued"
        elif outcome.retryable:
            state = "dead"
        else:
            state = "succeeded" if outcome.status < 400 else "failed"
        delay = min(
            self.settings.retry_max_s, self.settings.retry_base_s * 2 ** (call.attempts - 1)
        )
        written = await self._finish(
            call,
            state=state,
            status=outcome.status,
            result=result,
            result_truncated=truncated,
            content_type=outcome.content_type,
            error=outcome.message or None,
            retry_at=datetime.now(UTC) + timedelta(seconds=delay) if retry else None,
            record=None
            if retry
            else outcome_record(
                call.namespace, call.function, call.id, outcome, trigger=ASYNC_TRIGGER
            ),
        )
        if not written:
            log.warning(
                "async call %s of %s/%s ended after its lease ran out: it is recorded"
                " interrupted, this outcome (HTTP %d) is not written",
                call.id,
                call.namespace,
                call.function,
                outcome.status,
            )
            return
        if not retry:
            self._start_callback(call)
        else:
            log.info(
                "async call %s of %s/%s failed (attempt %d/%d), retrying in %.1f s",
                call.id,
                call.namespace,
                call.function,
                call.attempts,
                call.max_attempts,
                delay,
            )

    async def _finish(self, call: QueuedCall, **outcome: Any) -> bool:
        """``QueueRepository.finish``, retried while the database is away (restarting),
        as long as the lease may still hold: an outcome is not given up at the first
        refused connection."""
        deadline = time.monotonic() + self.queue.lease_margin_s
        delay = 0.1
        while True:
            try:
                return await self.queue.finish(call, **outcome)
            except TRANSIENT_DB_ERRORS as e:
                if time.monotonic() + delay > deadline:
                    raise
                log.info("writing async call %s's outcome: %s; retrying", call.id, type(e).__name__)
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)

    def _start_callback(self, call: QueuedCall) -> None:
        task = asyncio.create_task(self._call_back(call))
        self._calling_back.add(task)
        task.add_done_callback(self._calling_back.discard)

    async def _call_back(self, call: QueuedCall) -> None:
        try:
            spec = await self.callbacks.wanted(call.namespace, call.function)
            if spec is None:
                return
            row = await self.queue.get(call.namespace, call.id)
            if row is None or row["state"] not in ("succeeded", "failed", "dead", INTERRUPTED):
                return  # deleted with its namespace, or not this attempt's to report
            outcome = await self.callbacks.deliver(spec, callback_document(row))
            await self.queue.set_callback(call.id, outcome.as_json())
        except Exception as e:
            # e.g. the database restarting; the call's own state is already written
            log.warning(
                "callback of %s/%s failed: %s", call.namespace, call.function, type(e).__name__
            )

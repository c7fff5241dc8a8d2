"""Asynchronous invocations: a durable queue in PostgreSQL and its workers.

``enqueue`` stores the call and wakes this process's worker; workers of every gateway
process also poll, so a call queued by one gateway can run on another. A call is tried up
to ``max_attempts`` times: an answer below 500 ends it (``succeeded``, or ``failed`` for
a 4xx, which a retry would not change); a 5xx, a timeout or a function that is not ready
is retried after ``retry_base_s * 2**(attempt-1)`` (at most ``retry_max_s``), and after the
last attempt the call is ``dead`` (dead-lettered, kept for inspection). The invocation
record is written once, when the call ends, under the id the 202 answer gave.

When the call ends and its function has a ``callback_url``, the callback is sent in a
task of its own (``sless.events.callbacks``), so a slow receiver never holds a queue slot;
its outcome is stored with the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from datetime import UTC, datetime, timedelta

from sless.backends import Backend
from sless.config import EventsSettings
from sless.events.callbacks import CallbackSender, callback_document
from sless.events.calling import invoke, record_outcome
from sless.events.polling import PollingWorker
from sless.store import InvocationRecorder, QueuedCall, QueueRepository, SecretRepository

log = logging.getLogger(__name__)

ASYNC_TRIGGER = "async"


class InvocationQueue(PollingWorker):
    # a call cut at stop stays 'running' until its lease ends, then runs again
    name = "invocation-queue"

    def __init__(
        self,
        settings: EventsSettings,
        backend: Backend,
        recorder: InvocationRecorder,
        queue: QueueRepository,
        secrets: SecretRepository,
    ) -> None:
        super().__init__(settings.poll_interval_s)
        self.settings = settings
        self.backend = backend
        self.recorder = recorder
        self.queue = queue
        self._slots = asyncio.Semaphore(settings.queue_concurrency)
        self.callbacks = CallbackSender(
            backend,
            secrets,
            retry_base_s=settings.retry_base_s,
            retry_max_s=settings.retry_max_s,
        )
        self._calling_back: set[asyncio.Task[None]] = set()

    async def stop(self, grace_s: float) -> None:
        await super().stop(grace_s)
        if self._calling_back:
            # callbacks under way finish within the grace or are dropped (at most once)
            _, pending = await asyncio.wait(self._calling_back, timeout=grace_s)
            for task in pending:
                task.cancel()
            for task in pending:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def enqueue(
        self,
        invocation_id: uuid.UUID,
        namespace: str,
        function: str,
        *,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> None:
        await self.queue.enqueue(
            invocation_id,
            namespace,
            function,
            method=method,
            path=path,
            headers=headers,
            body=body,
            max_attempts=self.settings.max_attempts,
        )
        self._wake.set()

    async def run_once(self) -> int:
        """Take as many due calls as there are free slots and start them."""
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

    async def _attempt(self, call: QueuedCall) -> None:
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
        )
        retry = outcome.retryable and not last
        if not retry:
            record_outcome(
                self.recorder,
                call.namespace,
                call.function,
                call.id,
                outcome,
                trigger=ASYNC_TRIGGER,
            )
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
        await self.queue.finish(
            call,
            state=state,
            status=outcome.status,
            result=result,
            result_truncated=truncated,
            content_type=outcome.content_type,
            error=outcome.message or None,
            retry_at=datetime.now(UTC) + timedelta(seconds=delay) if retry else None,
        )
        if not retry:
            task = asyncio.create_task(self._call_back(call))
            self._calling_back.add(task)
            task.add_done_callback(self._calling_back.discard)
        if retry:
            log.info(
                "async call %s of %s/%s failed (attempt %d/%d), retrying in %.1f s",
                call.id,
                call.namespace,
                call.function,
                call.attempts,
                call.max_attempts,
                delay,
            )

    async def _call_back(self, call: QueuedCall) -> None:
        try:
            spec = await self.callbacks.wanted(call.namespace, call.function)
            if spec is None:
                return
            row = await self.queue.get(call.namespace, call.id)
            if row is None or row["state"] not in ("succeeded", "failed", "dead"):
                return  # deleted with its namespace, or not this attempt's to report
            outcome = await self.callbacks.deliver(spec, callback_document(row))
            await self.queue.set_callback(call.id, outcome.as_json())
        except Exception as e:
            # e.g. the database restarting; the call's own state is already written
            log.warning(
                "callback of %s/%s failed: %s", call.namespace, call.function, type(e).__name__
            )

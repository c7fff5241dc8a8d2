"""The embedded cron scheduler: one per gateway process, each tick fired at most once.

Every ``scheduler_interval_s`` each scheduler reads the enabled cron triggers and, for
each, the ticks due from ``max(last tick taken, trigger written, now - catch-up window)``
up to a short look-ahead (``prewarm_s`` or one interval). It claims a tick by inserting
it into ``trigger_ticks``: the primary key lets exactly one process win, whatever the
number of gateways sharing the database. The winner sleeps until the tick (starting a
worker ``prewarm_s`` before it) and invokes the function with the trigger's payload.

Ticks missed while no gateway ran are fired late only inside the catch-up window; older
ones are skipped, never replayed. A tick claimed by a process that then stops is lost
(at most once, never twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from datetime import UTC, datetime, timedelta
from itertools import islice

from sless.backends import Serving
from sless.config import EventsSettings
from sless.errors import SlessError
from sless.events.calling import invoke, json_request, record_outcome
from sless.events.schedules import ticks
from sless.store import InvocationRecorder, TriggerRecord, TriggerRepository

log = logging.getLogger(__name__)

#: ticks fired per trigger and pass (a per-second schedule after a long pause)
_MAX_TICKS_PER_PASS = 100
#: after a prewarmed tick, the worker stays at least this long before idle reaping applies
_WARM_AFTER_TICK_S = 5.0
_PRUNE_EVERY_PASSES = 600


class CronScheduler:
    def __init__(
        self,
        settings: EventsSettings,
        backend: Serving,
        recorder: InvocationRecorder,
        triggers: TriggerRepository,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.recorder = recorder
        self.triggers = triggers
        self._task: asyncio.Task[None] | None = None
        self._firing: set[asyncio.Task[None]] = set()
        #: ticks this scheduler won (tests and metrics)
        self.fired = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="cron-scheduler")

    async def stop(self) -> None:
        tasks = [t for t in [self._task, *self._firing] if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._task = None
        self._firing.clear()

    async def _run(self) -> None:
        passes = 0
        while True:
            try:
                await self.run_once()
                passes += 1
                if passes % _PRUNE_EVERY_PASSES == 0:
                    window = timedelta(seconds=self.settings.catchup_window_s)
                    await self.triggers.prune_ticks(datetime.now(UTC) - window - timedelta(days=1))
            except Exception as e:  # the database may be restarting: try again next pass
                log.warning("cron scheduler pass failed: %s", type(e).__name__)
            await asyncio.sleep(self.settings.scheduler_interval_s)

    async def run_once(self) -> int:
        """Claim and start the due ticks of every enabled cron trigger; returns how many."""
        now = datetime.now(UTC)
        started = 0
        for record in await self.triggers.list_enabled_cron():
            try:
                started += await self._schedule(record, now)
            except SlessError as e:
                log.warning(
                    "trigger %s/%s: %s", record.trigger.namespace, record.trigger.name, e.message
                )
        return started

    async def _schedule(self, record: TriggerRecord, now: datetime) -> int:
        spec = record.spec
        window = timedelta(seconds=self.settings.catchup_window_s)
        after = max(record.updated_at, now - window)
        last = record.trigger.status.last_tick
        if last is not None:
            after = max(after, last)
        ahead = timedelta(seconds=max(spec.prewarm_s, self.settings.scheduler_interval_s))
        started = 0
        for tick in islice(ticks(spec, after, now + ahead), _MAX_TICKS_PER_PASS):
            invocation_id = uuid.uuid4()
            namespace, name = record.trigger.namespace, record.trigger.name
            if not await self.triggers.claim_tick(namespace, name, tick, invocation_id):
                continue  # another scheduler has it
            task = asyncio.create_task(self._fire(record, tick, invocation_id))
            self._firing.add(task)
            task.add_done_callback(self._firing.discard)
            started += 1
        return started

    async def _fire(self, record: TriggerRecord, tick: datetime, invocation_id: uuid.UUID) -> None:
        trigger = record.trigger
        spec = trigger.spec
        delay = (tick - datetime.now(UTC)).total_seconds()
        if spec.prewarm_s > 0 and delay > 0:
            try:
                until = time.monotonic() + delay + _WARM_AFTER_TICK_S
                await self.backend.prewarm(trigger.namespace, spec.function, until=until)
            except Exception as e:  # the tick still fires, cold
                log.warning("pre-warming %s/%s failed: %s", trigger.namespace, spec.function, e)
            delay = (tick - datetime.now(UTC)).total_seconds()
        if delay > 0:
            await asyncio.sleep(delay)
        headers, body = json_request(spec.payload, trigger=trigger.name)
        headers.append(("sless-tick", tick.isoformat()))
        self.fired += 1
        outcome = await invoke(
            self.backend,
            trigger.namespace,
            spec.function,
            invocation_id=invocation_id,
            headers=headers,
            body=body,
        )
        record_outcome(
            self.recorder,
            trigger.namespace,
            spec.function,
            invocation_id,
            outcome,
            trigger=trigger.name,
        )

"""The embedded cron scheduler: one per gateway process, each tick fired at most once.

Every ``scheduler_interval_s`` each scheduler reads the enabled cron triggers and, for
each, the ticks due from ``max(last tick taken, trigger written, now - catch-up window)``
up to a short look-ahead (``prewarm_s`` or one interval). It claims a tick by inserting
it into ``trigger_ticks``: the primary key lets exactly one process win, whatever the
number of gateways sharing the database. The winner sleeps until the tick (starting a
worker ``prewarm_s`` before it) and invokes the function with the trigger's payload.

Ticks missed while no gateway ran are fired late only inside the catch-up window; older
ones are skipped, never replayed.

Never twice, never silently lost (``sless.store.triggers``): the tick is stamped started
in PostgreSQL before the function is called, and its outcome (with its invocation record)
is written only under the claim's lease. Each pass first takes over the ticks of a
scheduler that stopped (their lease ran out; at once when this process starts as the
database's only user, ``recover_at_start``): a claimed tick never started is fired now
(inside the catch-up window), a started one ends ``interrupted`` with its record.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from itertools import islice

from sless.backends import Serving, Tracing
from sless.config import EventsSettings
from sless.errors import SlessError
from sless.events.calling import invoke, json_request, outcome_record
from sless.events.polling import PollingWorker
from sless.events.schedules import ticks
from sless.store import (
    TRANSIENT_DB_ERRORS,
    ClaimedTick,
    TriggerRecord,
    TriggerRepository,
)

log = logging.getLogger(__name__)

#: ticks fired per trigger and pass (a per-second schedule after a long pause)
_MAX_TICKS_PER_PASS = 100
#: after a prewarmed tick, the worker stays at least this long before idle reaping applies
_WARM_AFTER_TICK_S = 5.0
_PRUNE_EVERY_PASSES = 600


class CronScheduler(PollingWorker):
    """The polling loop of ``sless.events.polling`` every ``scheduler_interval_s``; the
    first pass runs at once. A tick in flight at ``stop`` is cut: its lease runs out and
    another scheduler takes it over."""

    name = "cron-scheduler"

    def __init__(
        self,
        settings: EventsSettings,
        backend: Serving,
        triggers: TriggerRepository,
        *,
        recover_at_start: bool = False,
        tracing: Tracing | None = None,
    ) -> None:
        super().__init__(settings.scheduler_interval_s)
        #: each tick starts a trace of its own (sless.backends.tracing)
        self.tracing = tracing
        self.settings = settings
        #: this process is the database's only user: every open tick is a dead one's
        self._recover_all = recover_at_start
        self.backend = backend
        self.triggers = triggers
        #: ticks this scheduler won (tests and metrics)
        self.fired = 0
        self._passes = 0

    def start(self) -> None:
        super().start()
        self.wake()  # the first pass now, not an interval from now

    async def stop(self, grace_s: float = 0.0) -> None:
        await super().stop(grace_s)

    async def run_once(self) -> int:
        """One pass (``_claim_due``); every ``_PRUNE_EVERY_PASSES`` passes, old ticks go."""
        started = await self._claim_due()
        self._passes += 1
        if self._passes % _PRUNE_EVERY_PASSES == 0:
            window = timedelta(seconds=self.settings.catchup_window_s)
            await self.triggers.prune_ticks(datetime.now(UTC) - window - timedelta(days=1))
        return started

    async def _claim_due(self) -> int:
        """Take over the ticks of a stopped scheduler, then claim and start the due ticks
        of every enabled cron trigger; returns how many were started."""
        now = datetime.now(UTC)
        window = timedelta(seconds=self.settings.catchup_window_s)
        recovered = await self.triggers.recover_ticks(
            fire_after=now - window,
            lease_margin_s=self.settings.lease_margin_s,
            all_open=self._recover_all,
        )
        self._recover_all = False
        records = await self.triggers.list_enabled_cron()
        by_name = {(r.trigger.namespace, r.trigger.name): r for r in records}
        started = 0
        for claimed in recovered:
            record = by_name.get((claimed.namespace, claimed.trigger))
            if record is None:  # disabled meanwhile: its lease runs out, then it is skipped
                continue
            log.info(
                "trigger %s/%s: firing tick %s, claimed by a scheduler that stopped",
                claimed.namespace,
                claimed.trigger,
                claimed.tick.isoformat(),
            )
            self._start(record, claimed)
            started += 1
        for record in records:
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
            namespace, name = record.trigger.namespace, record.trigger.name
            claimed = await self.triggers.claim_tick(
                namespace, name, tick, uuid.uuid4(), lease_margin_s=self.settings.lease_margin_s
            )
            if claimed is None:
                continue  # another scheduler has it
            self._start(record, claimed)
            started += 1
        return started

    def _start(self, record: TriggerRecord, claimed: ClaimedTick) -> None:
        task = asyncio.create_task(self._fire(record, claimed))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _fire(self, record: TriggerRecord, claimed: ClaimedTick) -> None:
        try:
            await self._fire_once(record, claimed)
        except TRANSIENT_DB_ERRORS as e:
            # the database stayed away: the lease runs out and the tick is taken over
            # (fired if it had not started, else interrupted)
            log.warning(
                "trigger %s/%s: tick %s: its state could not be written: %s",
                claimed.namespace,
                claimed.trigger,
                claimed.tick.isoformat(),
                e,
            )

    async def _fire_once(self, record: TriggerRecord, claimed: ClaimedTick) -> None:
        trigger = record.trigger
        spec = trigger.spec
        tick, invocation_id = claimed.tick, claimed.invocation_id
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
        margin = self.settings.lease_margin_s
        started = await self._with_database(
            lambda: self.triggers.start_tick(claimed, spec.function, margin), margin
        )
        if not started:
            log.warning(
                "trigger %s/%s: tick %s was taken over before it started; not fired here",
                trigger.namespace,
                trigger.name,
                tick.isoformat(),
            )
            return
        self.fired += 1
        outcome = await invoke(
            self.backend,
            trigger.namespace,
            spec.function,
            invocation_id=invocation_id,
            headers=headers,
            body=body,
            tracing=self.tracing,
            trigger=trigger.name,
        )
        record_ = outcome_record(
            trigger.namespace, spec.function, invocation_id, outcome, trigger=trigger.name
        )
        if not await self._with_database(
            lambda: self.triggers.finish_tick(claimed, record_), margin
        ):
            log.warning(
                "trigger %s/%s: tick %s ended after its lease ran out: it is recorded"
                " interrupted, this outcome (HTTP %d) is not written",
                trigger.namespace,
                trigger.name,
                tick.isoformat(),
                outcome.status,
            )

    @staticmethod
    async def _with_database(write: Callable[[], Awaitable[bool]], patience_s: float) -> bool:
        """``write()``, retried while the database is away (restarting), for at most
        ``patience_s`` (within the lease); then the error is raised (the tick's lease
        runs out and the next pass takes it over)."""
        deadline = time.monotonic() + patience_s
        delay = 0.1
        while True:
            try:
                return await write()
            except TRANSIENT_DB_ERRORS as e:
                if time.monotonic() + delay > deadline:
                    raise
                log.info("cron tick state: %s; retrying", type(e).__name__)
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)

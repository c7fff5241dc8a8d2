"""Everything that invokes functions without a caller waiting: started with the gateway.

- the asynchronous invocation queue (both modes: it only needs the backend's upstreams);
- embedded mode only: the cron scheduler, the job runner and the RabbitMQ trigger
  consumers. Kubernetes mode has CronJobs and Jobs made by the operator instead, and its
  RabbitMQ consumers run in their own process, ``sless events`` (``standalone.py``): a
  gateway there starts none, so scaling the gateway does not multiply broker connections.
"""

from __future__ import annotations

import logging

import asyncpg

from sless.backends import Backend, Tracing
from sless.config import Settings
from sless.events.consuming import RabbitConsumers
from sless.events.queueing import InvocationQueue
from sless.events.running import JobRunner
from sless.events.scheduling import CronScheduler
from sless.events.sources import DatabaseTriggers
from sless.store import (
    InvocationRecorder,
    JobRepository,
    QueuedCall,
    QueueRepository,
    SecretRepository,
    TriggerRepository,
    cipher_for,
)

log = logging.getLogger(__name__)


class Events:
    def __init__(
        self,
        settings: Settings,
        db: asyncpg.Pool,
        backend: Backend,
        recorder: InvocationRecorder,
        *,
        sole_user: bool = False,
        tracing: Tracing | None = None,
    ) -> None:
        self.settings = settings
        secrets = SecretRepository(db, cipher_for(settings))
        queue = QueueRepository(db, lease_margin_s=settings.events.lease_margin_s)
        # ``sole_user``: no other process uses this database (the embedded PostgreSQL of a
        # data directory this process holds locked): every call or tick left running is a
        # crashed predecessor's, taken over at start instead of after its lease
        self.queue = InvocationQueue(
            settings.events,
            backend,
            queue,
            secrets,
            recover_at_start=sole_user,
            tracing=tracing,
            private_allowed=settings.egress.private_allowed,
        )
        self.scheduler: CronScheduler | None = None
        self.runner: JobRunner | None = None
        self.consumers: RabbitConsumers | None = None
        if backend.events_in_process:
            self.scheduler = CronScheduler(
                settings.events,
                backend,
                TriggerRepository(db),
                recover_at_start=sole_user,
                tracing=tracing,
            )
            self.runner = JobRunner(
                settings.events,
                backend,
                recorder,
                JobRepository(db),
                recover_at_start=sole_user,
                tracing=tracing,
            )
            self.consumers = RabbitConsumers(
                settings.events,
                settings.gateway.shutdown_grace_s,
                backend,
                recorder,
                DatabaseTriggers(TriggerRepository(db)),
                secrets,
                tracing=tracing,
            )

    def start(self) -> None:
        if not self.settings.events.enabled:
            log.info("events are off in this process (SLESS_EVENTS_ENABLED=false)")
            return
        self.queue.start()
        if self.scheduler is not None:
            self.scheduler.start()
        if self.runner is not None:
            self.runner.start()
        if self.consumers is not None:
            self.consumers.start()

    async def stop(self) -> None:
        grace = self.settings.gateway.shutdown_grace_s
        if self.consumers is not None:
            await self.consumers.stop()
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.runner is not None:
            await self.runner.stop(grace)
        await self.queue.stop(grace)

    async def enqueue(self, call: QueuedCall, *, max_pending: int | None = None) -> None:
        """Queue a call; its ``version`` (``name@v3``) pins it, else the split draws one.
        Refused (``QuotaExceeded``) when the namespace has ``max_pending`` calls queued
        or running."""
        await self.queue.enqueue(call, max_pending=max_pending)

    def consumer_lags(self) -> dict[tuple[str, str, str], int]:
        """``(namespace, trigger, function) → messages waiting`` of this process's
        rabbitmq consumers that have heard from their broker (metrics)."""
        return self.consumers.lags() if self.consumers is not None else {}

    def trigger_changed(self) -> None:
        """A trigger was written here: start, restart or stop its consumer now."""
        if self.consumers is not None:
            self.consumers.wake()

    def job_changed(self) -> None:
        """A job was written here: look for a run now rather than at the next poll."""
        if self.runner is not None:
            self.runner.wake()

"""The ``sless events`` process: the RabbitMQ trigger consumers of Kubernetes mode.

In Kubernetes mode the gateway starts no consumers (``Events`` only builds them for the
local backend): gateway replicas come and go with the HTTP load, and each would open one
broker connection per trigger. This process holds them instead, with what the consumers
need and nothing more:

- PostgreSQL: the tenants' secrets (broker URLs) and the invocation records, one per
  message, naming the trigger, as in embedded mode. Migrations run first (under the
  advisory lock the gateways take too), so the start order does not matter.
- the Kubernetes backend, read-only: Functions (the serving spec), EndpointSlices (the
  ready pods, which ``upstream()`` leases connections to) and Triggers (watched). Its
  service account needs get/list/watch on those three and nothing else
  (``deploy/rbac/events.yaml``).

Stopping (``stop``, on SIGTERM/SIGINT in the CLI) goes in order: the consumers cancel
their broker subscriptions and let in-flight messages finish within
``gateway.shutdown_grace_s``; what is still running then is cancelled unacknowledged, and
the broker delivers it again to another consumer: nothing is lost. Then the backend stops,
the invocation records still queued are written, and the pool closes.

Several replicas may run: they are competing consumers on each queue.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import asyncpg

from sless.backends import ClusterBackend, Tracing, make_cluster_backend
from sless.config import Settings
from sless.events.consuming import RabbitConsumers
from sless.events.sources import ClusterTriggers
from sless.store import (
    InvocationRecorder,
    SecretRepository,
    cipher_for,
    create_pool,
    migrate,
    start_recorder,
)
from sless.tasks import cancel_and_wait

log = logging.getLogger(__name__)


class EventsProcess:
    """Everything the process holds, started and stopped in order."""

    def __init__(self, settings: Settings, database_url: str) -> None:
        self.settings = settings
        self._database_url = database_url
        self.db: asyncpg.Pool | None = None
        self.backend: ClusterBackend | None = None
        self.recorder: InvocationRecorder | None = None
        self.consumers: RabbitConsumers | None = None
        self.tracing: Tracing | None = None

    def __repr__(self) -> str:  # never the database URL
        return f"<EventsProcess consumers={len(self.consumers.running) if self.consumers else 0}>"

    async def start(self) -> None:
        settings = self.settings
        db = await create_pool(
            self._database_url,
            min_size=settings.database.pool_min,
            max_size=settings.database.pool_max,
        )
        try:
            applied = await migrate(db)
            if applied:
                log.info("applied migrations %s", applied)
            backend = make_cluster_backend(settings)
            await backend.start()
            try:
                triggers = ClusterTriggers(backend)
                await triggers.start()
            except BaseException:
                await backend.stop()
                raise
        except BaseException:
            await db.close()
            raise
        recorder = await start_recorder(db, settings.data_dir / "journal" / "events")
        # as the gateway's (SLESS_GATEWAY_TRACING, SLESS_OTEL_EXPORTER_OTLP_ENDPOINT): a
        # message's call continues its publisher's trace
        otel = settings.otel
        tracing = Tracing.from_settings(
            settings.gateway.tracing, otel.exporter_otlp_endpoint, otel.service_name
        )
        consumers = RabbitConsumers(
            settings.events,
            settings.gateway.shutdown_grace_s,
            backend,
            recorder,
            triggers,
            SecretRepository(db, cipher_for(settings)),
            tracing=tracing,
        )
        consumers.start()
        self.db, self.backend, self.recorder, self.consumers = db, backend, recorder, consumers
        self.tracing = tracing

    async def stop(self) -> None:
        # first what calls functions, then the way to them, then the records of the calls
        if self.consumers is not None:
            await self.consumers.stop()
        if self.backend is not None:
            await self.backend.stop()
        if self.recorder is not None:
            await self.recorder.close()
        if self.db is not None:
            await self.db.close()
        if self.tracing is not None:  # the last spans out
            await asyncio.to_thread(self.tracing.shutdown)
        self.db = self.backend = self.recorder = self.consumers = self.tracing = None


#: touched after each successful database round trip (the Deployment's probes read its age)
HEARTBEAT_FILE = "events-alive"
HEARTBEAT_EVERY_S = 10.0


async def _heartbeat(path: Path, db: asyncpg.Pool) -> None:
    """A stuck event loop or a lost database shows as a stale file: no HTTP port needed."""
    while True:
        try:
            await db.fetchval("SELECT 1")
            await asyncio.to_thread(path.touch)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as e:
            log.warning("heartbeat failed: %s", type(e).__name__)
        await asyncio.sleep(HEARTBEAT_EVERY_S)


async def serve_events(settings: Settings, database_url: str, stop: asyncio.Event) -> None:
    """Run the consumers until ``stop`` is set, then stop them cleanly. While running,
    ``data_dir/events-alive`` is touched every 10 s (after a ``SELECT 1``)."""
    process = EventsProcess(settings, database_url)
    await process.start()
    log.info("sless events: consuming the rabbitmq triggers of every tenant")
    assert process.db is not None  # set by start(); not a security check
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    beating = asyncio.create_task(_heartbeat(settings.data_dir / HEARTBEAT_FILE, process.db))
    try:
        await stop.wait()
        log.info("sless events: stopping (in-flight messages finish or go back to the broker)")
    finally:
        await cancel_and_wait([beating])
        await process.stop()
    log.info("sless events: stopped")

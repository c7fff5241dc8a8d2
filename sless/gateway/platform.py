"""Everything a running gateway holds, built once at start-up and torn down in order."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg

from sless.backends import Backend, Tracing, make_backend
from sless.config import Settings
from sless.events import Events
from sless.functions import FunctionServices
from sless.gateway.idempotency import Idempotency
from sless.gateway.metrics import GatewayMetrics
from sless.gateway.paging import Cursors, Pagers
from sless.gateway.quota_usage import QuotaUsage
from sless.models import EgressReach, IPNetwork
from sless.store import (
    AuditRepository,
    BlobStore,
    IdempotencyRepository,
    InvocationHistory,
    InvocationRecorder,
    LLMReviewRepository,
    QueueRepository,
    ReportRepository,
    ReviewRepository,
    SecretCipher,
    SecretRepository,
    VersionRepository,
    cipher_for,
    create_pool,
    make_blob_store,
    migrate,
    signing_key,
    start_recorder,
)
from sless.tenancy import Tenancy
from sless.validation import ReportCache, Validator
from sless.validation.llm import StoredReviewCache

log = logging.getLogger(__name__)


async def _prepare_database(db: asyncpg.Pool, cipher: SecretCipher) -> SecretRepository:
    """Migrations applied, secrets sealed under the current key: before anything reads."""
    applied = await migrate(db)
    if applied:
        log.info("applied migrations %s", applied)
    secrets = SecretRepository(db, cipher)
    resealed = await secrets.reencrypt()
    if resealed:
        log.info("re-encrypted %d secrets under key %r", resealed, cipher.primary)
    return secrets


def _function_services(
    db: asyncpg.Pool,
    tenancy: Tenancy,
    backend: Backend,
    blobs: BlobStore,
    validator: Validator,
    metrics: GatewayMetrics,
    secrets: SecretRepository,
    private_allowed: Sequence[IPNetwork],
) -> FunctionServices:
    return FunctionServices(
        backend=backend,
        versions=VersionRepository(db),
        blobs=blobs,
        quotas=tenancy.quotas,
        validation=ReportCache(validator, ReportRepository(db)),
        reviews=ReviewRepository(db),
        secrets=secrets,
        on_validated=lambda report, cached: metrics.record_validation(report, cached=cached),
        reach=EgressReach(tuple(private_allowed)),
    )


@dataclass
class Platform:
    settings: Settings
    db: asyncpg.Pool
    tenancy: Tenancy
    backend: Backend
    blobs: BlobStore
    validator: Validator
    reviews: ReviewRepository
    recorder: InvocationRecorder
    events: Events
    cursors: Cursors
    idempotency: Idempotency
    secrets: SecretRepository
    metrics: GatewayMetrics
    versions: VersionRepository
    functions: FunctionServices
    history: InvocationHistory
    audit: AuditRepository
    pagers: Pagers
    quota_usage: QuotaUsage
    #: the calls' trace context and spans (sless.backends.tracing), from the settings
    tracing: Tracing

    @classmethod
    async def start(
        cls,
        settings: Settings,
        database_url: str,
        *,
        on_admin_token: Callable[[str], None] | None = None,
        sole_database_user: bool = False,
    ) -> Platform:
        # before anything else: production without a key refuses to start
        cipher = cipher_for(settings)
        db = await create_pool(
            database_url, min_size=settings.database.pool_min, max_size=settings.database.pool_max
        )
        try:
            secrets = await _prepare_database(db, cipher)
            blobs = make_blob_store(settings.s3, settings.data_dir)
            backend = make_backend(settings, db, blobs)
            # the mode's tenant infrastructure and limits, handed down (tenancy is below
            # the backends: it never imports them)
            tenancy = Tenancy(
                db,
                settings.auth,
                settings.limits,
                provision=backend.provision_tenant,
                tenant_limits=backend.tenant_limits,
            )
            generated = await tenancy.ensure_admin_token(
                settings.admin.token.get_secret_value() if settings.admin.token else None
            )
            if generated and on_admin_token is not None:
                on_admin_token(generated)
            await backend.start()
            gateway = settings.gateway
            key = (
                gateway.signing_key.get_secret_value().encode()
                if gateway.signing_key
                else await signing_key(db)
            )
        except BaseException:
            await db.close()
            raise
        try:
            # records a crashed predecessor journaled reach the database before we serve
            recorder = await start_recorder(db, settings.data_dir / "journal" / "gateway")
        except BaseException:
            await backend.stop()
            await db.close()
            raise
        return cls._assemble(
            settings, db, tenancy, backend, blobs, secrets, recorder, key, sole_database_user
        )

    @classmethod
    def _assemble(
        cls,
        settings: Settings,
        db: asyncpg.Pool,
        tenancy: Tenancy,
        backend: Backend,
        blobs: BlobStore,
        secrets: SecretRepository,
        recorder: InvocationRecorder,
        key: bytes,
        sole_database_user: bool,
    ) -> Platform:
        """The services above the database, the backend and the recorder, built once."""
        gateway = settings.gateway
        otel = settings.otel
        tracing = Tracing.from_settings(
            gateway.tracing, otel.exporter_otlp_endpoint, otel.service_name
        )
        events = Events(
            settings, db, backend, recorder, sole_user=sole_database_user, tracing=tracing
        )
        events.start()
        metrics = GatewayMetrics(max_functions_per_namespace=settings.limits.max_functions)
        metrics.watch_recorder(recorder)
        metrics.watch_builds(backend.build_durations)
        metrics.watch_egress(backend.egress_connections)
        validator = Validator(
            settings.validation, settings.llm, llm_cache=StoredReviewCache(LLMReviewRepository(db))
        )
        cursors = Cursors(key, ttl_s=gateway.cursor_ttl_s)
        idempotency = Idempotency(
            IdempotencyRepository(
                db, ttl_s=gateway.idempotency_ttl_s, max_keys=gateway.idempotency_max_keys
            ),
            key,
        )
        versions = VersionRepository(db)
        return cls(
            settings=settings,
            db=db,
            tenancy=tenancy,
            backend=backend,
            blobs=blobs,
            validator=validator,
            reviews=ReviewRepository(db),
            recorder=recorder,
            events=events,
            cursors=cursors,
            idempotency=idempotency,
            secrets=secrets,
            metrics=metrics,
            versions=versions,
            functions=_function_services(
                db,
                tenancy,
                backend,
                blobs,
                validator,
                metrics,
                secrets,
                settings.egress.private_allowed,
            ),
            history=InvocationHistory(db),
            audit=AuditRepository(db),
            pagers=Pagers(cursors),
            tracing=tracing,
            quota_usage=QuotaUsage(
                tenancy=tenancy,
                backend=backend,
                secrets=secrets,
                versions=versions,
                queue=QueueRepository(db),
                idempotency_keys=idempotency.repository,
            ),
        )

    @property
    def public_url(self) -> str:
        gateway = self.settings.gateway
        return (gateway.public_url or f"http://{gateway.host}:{gateway.port}").rstrip("/")

    async def stop(self) -> None:
        # first what calls functions on its own, then the functions
        await self.events.stop()
        await self.backend.stop()
        await self.recorder.close()
        self.tracing.shutdown()
        await self.validator.close()
        await self.db.close()

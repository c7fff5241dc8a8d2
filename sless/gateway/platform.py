"""Everything a running gateway holds, built once at start-up and torn down in order."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from sless.backends import Backend, make_backend
from sless.config import Settings
from sless.events import Events
from sless.gateway.idempotency import Idempotency
from sless.gateway.metrics import GatewayMetrics
from sless.gateway.paging import Cursors, PageParams, Pager, scope
from sless.store import (
    BlobStore,
    IdempotencyRepository,
    InvocationRecorder,
    LLMReviewRepository,
    ReportRepository,
    ReviewRepository,
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
from sless.validation import StageResult, Validator
from sless.validation.llm import ReviewKey

log = logging.getLogger(__name__)


class PostgresReviewCache:
    """The LLM stage's ReviewCache, kept in PostgreSQL (shared by every gateway)."""

    def __init__(self, db: asyncpg.Pool) -> None:
        self.reviews = LLMReviewRepository(db)

    async def get(self, key: ReviewKey) -> StageResult | None:
        found = await self.reviews.get(key.code_sha256, key.model, key.prompt_version)
        return StageResult.model_validate(found) if found is not None else None

    async def put(self, key: ReviewKey, result: StageResult) -> None:
        await self.reviews.put(
            key.code_sha256, key.model, key.prompt_version, result.model_dump(mode="json")
        )


@dataclass
class Platform:
    settings: Settings
    db: asyncpg.Pool
    tenancy: Tenancy
    backend: Backend
    blobs: BlobStore
    validator: Validator
    reports: ReportRepository
    reviews: ReviewRepository
    recorder: InvocationRecorder
    events: Events
    cursors: Cursors
    idempotency: Idempotency
    secrets: SecretRepository
    metrics: GatewayMetrics
    versions: VersionRepository

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
            applied = await migrate(db)
            if applied:
                log.info("applied migrations %s", applied)
            secrets = SecretRepository(db, cipher)
            resealed = await secrets.reencrypt()
            if resealed:
                log.info("re-encrypted %d secrets under key %r", resealed, cipher.primary)
            tenancy = Tenancy(db, settings.auth, settings.limits)
            generated = await tenancy.ensure_admin_token(
                settings.admin.token.get_secret_value() if settings.admin.token else None
            )
            if generated and on_admin_token is not None:
                on_admin_token(generated)
            blobs = make_blob_store(settings.s3, settings.data_dir)
            backend = make_backend(settings, db, blobs)
            await backend.start()
            tenancy.provision = backend.provision_tenant
            tenancy.quotas.external = backend.tenant_limits
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
        events = Events(settings, db, backend, recorder, sole_user=sole_database_user)
        events.start()
        metrics = GatewayMetrics(max_functions_per_namespace=settings.limits.max_functions)
        metrics.watch_recorder(recorder)
        metrics.watch_builds(backend.build_durations)
        return cls(
            settings=settings,
            db=db,
            tenancy=tenancy,
            backend=backend,
            blobs=blobs,
            validator=Validator(
                settings.validation, settings.llm, llm_cache=PostgresReviewCache(db)
            ),
            reports=ReportRepository(db),
            reviews=ReviewRepository(db),
            recorder=recorder,
            events=events,
            cursors=Cursors(key, ttl_s=gateway.cursor_ttl_s),
            idempotency=Idempotency(
                IdempotencyRepository(
                    db, ttl_s=gateway.idempotency_ttl_s, max_keys=gateway.idempotency_max_keys
                ),
                key,
            ),
            secrets=secrets,
            metrics=metrics,
            versions=VersionRepository(db),
        )

    def pager(self, kind: str, owner: str | None, params: PageParams, **filters: object) -> Pager:
        """The paging of one list, bound to its owner (a namespace; None: the admin)."""
        return Pager(self.cursors, scope(kind, owner, **filters), params)

    @property
    def public_url(self) -> str:
        gateway = self.settings.gateway
        return (gateway.public_url or f"http://{gateway.host}:{gateway.port}").rstrip("/")

    async def stop(self) -> None:
        # first what calls functions on its own, then the functions
        await self.events.stop()
        await self.backend.stop()
        await self.recorder.close()
        await self.validator.close()
        await self.db.close()

"""Persistence: PostgreSQL repositories (asyncpg), migrations and code blob stores."""

from sless.store.admission import CodeGate
from sless.store.audit import AuditEntry, AuditRepository
from sless.store.blobs import BlobStore, LocalBlobStore, S3BlobStore, make_blob_store
from sless.store.crypto import SecretCipher, SecretKeyError, UndecryptableSecret, cipher_for
from sless.store.db import create_pool, migrate
from sless.store.embedded import DataDirInUse, EmbeddedPostgres
from sless.store.functions import NOTIFY_CHANNEL, FunctionRecord, FunctionRepository
from sless.store.history import InvocationHistory, get_invocation, list_invocations
from sless.store.idempotency import IdempotencyRepository, IdempotencyRow
from sless.store.invocations import (
    TRANSIENT_DB_ERRORS,
    InvocationRecord,
    InvocationRecorder,
    start_recorder,
)
from sless.store.jobs import Decision, JobRecord, JobRepository
from sless.store.keys import signing_key
from sless.store.locks import TenantLock
from sless.store.queue import INTERRUPTED, QueuedCall, QueueRepository
from sless.store.reports import LLMReviewRepository, ReportRepository
from sless.store.reviews import ReviewRepository
from sless.store.secrets import SecretInfo, SecretRepository
from sless.store.stats import invocation_buckets, verdict_buckets
from sless.store.tenants import (
    TenantLimitsRepository,
    TenantRepository,
    TenantRow,
    TokenRepository,
    TokenRow,
)
from sless.store.triggers import ClaimedTick, TriggerRecord, TriggerRepository
from sless.store.versions import VersionRepository

__all__ = [
    "INTERRUPTED",
    "NOTIFY_CHANNEL",
    "TRANSIENT_DB_ERRORS",
    "AuditEntry",
    "AuditRepository",
    "BlobStore",
    "ClaimedTick",
    "CodeGate",
    "DataDirInUse",
    "Decision",
    "EmbeddedPostgres",
    "FunctionRecord",
    "FunctionRepository",
    "IdempotencyRepository",
    "IdempotencyRow",
    "InvocationHistory",
    "InvocationRecord",
    "InvocationRecorder",
    "JobRecord",
    "JobRepository",
    "LLMReviewRepository",
    "LocalBlobStore",
    "QueueRepository",
    "QueuedCall",
    "ReportRepository",
    "ReviewRepository",
    "S3BlobStore",
    "SecretCipher",
    "SecretInfo",
    "SecretKeyError",
    "SecretRepository",
    "TenantLimitsRepository",
    "TenantLock",
    "TenantRepository",
    "TenantRow",
    "TokenRepository",
    "TokenRow",
    "TriggerRecord",
    "TriggerRepository",
    "UndecryptableSecret",
    "VersionRepository",
    "cipher_for",
    "create_pool",
    "get_invocation",
    "invocation_buckets",
    "list_invocations",
    "make_blob_store",
    "migrate",
    "signing_key",
    "start_recorder",
    "verdict_buckets",
]

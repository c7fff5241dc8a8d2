"""Persistence: PostgreSQL repositories (asyncpg), migrations and code blob stores."""

from sless.store.blobs import BlobStore, LocalBlobStore, S3BlobStore, make_blob_store
from sless.store.db import create_pool, migrate
from sless.store.embedded import EmbeddedPostgres
from sless.store.functions import NOTIFY_CHANNEL, FunctionRecord, FunctionRepository
from sless.store.invocations import InvocationRecord, InvocationRecorder, list_invocations
from sless.store.reports import ReportRepository
from sless.store.reviews import ReviewRepository
from sless.store.tenants import TenantRepository, TenantRow, TokenRepository, TokenRow

__all__ = [
    "NOTIFY_CHANNEL",
    "BlobStore",
    "EmbeddedPostgres",
    "FunctionRecord",
    "FunctionRepository",
    "InvocationRecord",
    "InvocationRecorder",
    "LocalBlobStore",
    "ReportRepository",
    "ReviewRepository",
    "S3BlobStore",
    "TenantRepository",
    "TenantRow",
    "TokenRepository",
    "TokenRow",
    "create_pool",
    "list_invocations",
    "make_blob_store",
    "migrate",
]

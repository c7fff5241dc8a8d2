"""What the function lifecycle touches, and nothing else.

The use cases of ``sless.functions`` take this, not the gateway's ``Platform``: its fields
say every service an upload, a spec put, a rollback or a review decision reaches. The
gateway builds it once at start-up (``Platform.start``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from sless.backends import Backend
from sless.models import EgressReach
from sless.store import (
    BlobStore,
    CodeGate,
    ReviewRepository,
    SecretRepository,
    VersionRepository,
)
from sless.tenancy import Quotas
from sless.validation import Report, ReportCache


class Precondition(Protocol):
    """What a writer expects of an object now (an ``If-Match``): raises unless met."""

    def check(self, current: str | None) -> None: ...


@dataclass(frozen=True)
class FunctionServices:
    backend: Backend
    versions: VersionRepository
    blobs: BlobStore
    quotas: Quotas
    validation: ReportCache
    reviews: ReviewRepository
    #: a spec names only secrets that exist (``missing``); never a value read here
    secrets: SecretRepository
    #: told of each upload's report (``cached``: remembered, not made now), for metrics
    on_validated: Callable[[Report, bool], None]
    #: the provider's rule over every egress allowlist (``SLESS_EGRESS_PRIVATE_ALLOWED``):
    #: a rule that names only refused addresses is refused when the spec is put
    reach: EgressReach = field(default_factory=EgressReach)

    @property
    def gate(self) -> CodeGate:
        """The one decision of which code may serve (``sless.store.CodeGate``)."""
        return CodeGate(self.versions)

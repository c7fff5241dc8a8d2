"""The platform's error family, mapped to HTTP statuses in one place (gateway/errors.py).

Messages are shown to API callers: they never contain a token, a header value or a
payload longer than a short excerpt.
"""

from __future__ import annotations

from typing import Any


class SlessError(Exception):
    status = 500
    code = "internal"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class BadRequest(SlessError):
    status = 400
    code = "bad_request"


class Unauthorized(SlessError):
    status = 401
    code = "unauthorized"


class NotFound(SlessError):
    status = 404
    code = "not_found"


class Conflict(SlessError):
    status = 409
    code = "conflict"


class PreconditionFailed(SlessError):
    """An ``If-Match`` named a ``resource_version`` that is no longer the object's."""

    status = 412
    code = "precondition_failed"


class QuotaExceeded(SlessError):
    """A tenant quota (functions, memory, code, triggers, jobs, secrets...) would be exceeded.

    403, as Kubernetes answers a ResourceQuota refusal: the request is understood and
    authorised, but the tenant may not own more. ``details`` names the quota, the use it
    would reach and the limit.
    """

    status = 403
    code = "quota_exceeded"

    @classmethod
    def past(
        cls, quota: str, *, used: int, requested: int, limit: int, unit: str = ""
    ) -> QuotaExceeded:
        """The one form of every quota refusal: the quota's name, the use it would reach,
        the limit and the use now (message and ``details``)."""
        return cls(
            f"quota {quota} exceeded: this change needs {requested}{unit}, the limit is "
            f"{limit}{unit} ({used}{unit} in use)",
            details={"quota": quota, "used": used, "requested": requested, "limit": limit},
        )


class PayloadTooLarge(SlessError):
    status = 413
    code = "payload_too_large"


class Invalid(SlessError):
    status = 422
    code = "invalid"


class ValidationRejected(SlessError):
    """The upload's validation verdict was ``reject``; ``details`` is the report."""

    status = 422
    code = "validation_rejected"


class NotReady(SlessError):
    status = 503
    code = "not_ready"


class BackendUnavailable(SlessError):
    status = 503
    code = "backend_unavailable"


class StorageUnavailable(BackendUnavailable):
    """The code blob store (S3) cannot be reached: retry later; nothing was changed."""

    code = "storage_unavailable"


class DatabaseUnavailable(SlessError):
    """PostgreSQL cannot be reached (restarting, down): retry later."""

    status = 503
    code = "database_unavailable"


class InsufficientStorage(SlessError):
    """The disk that holds the platform's data is full: nothing was changed."""

    status = 507
    code = "insufficient_storage"


class InvocationTimeout(SlessError):
    status = 504
    code = "timeout"


class UpstreamError(SlessError):
    status = 502
    code = "bad_gateway"


class TooManyRequests(SlessError):
    """A rate or concurrency limit was hit; ``retry_after`` is whole seconds (>= 1)."""

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        retry_after = max(1, retry_after)
        super().__init__(message, details={"retry_after": retry_after})
        self.retry_after = retry_after

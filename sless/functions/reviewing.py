"""A provider's decision on an upload held for review.

The decision is kept first (the review row, which refuses a second decision), then the
versions of that code take its state (``allowed`` or ``rejected``: the code gate reads
it), then the backend learns it (it builds and serves approved code, or marks the
function rejected). The order means a failure half-way leaves the code not serving.
"""

from __future__ import annotations

from typing import Any

from sless.functions.services import FunctionServices
from sless.models import VersionState


async def decide(
    services: FunctionServices, review_id: int, *, approve: bool, reason: str, by: str
) -> dict[str, Any]:
    """Approve or reject the held upload ``review_id``; the review row as decided."""
    row = await services.reviews.decide(review_id, approve=approve, reason=reason, by=by)
    await services.versions.set_state(
        row["namespace"],
        row["function"],
        row["sha256"],
        state=VersionState.ALLOWED if approve else VersionState.REJECTED,
    )
    await services.backend.decide_review(
        row["namespace"], row["function"], row["sha256"], approve=approve, reason=reason
    )
    return row

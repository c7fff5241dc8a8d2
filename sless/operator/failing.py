"""The one rule of a kopf handler's failure: permanent or temporary, on purpose.

kopf retries a handler that raises ``kopf.TemporaryError`` (after ``delay``) and stops on
``kopf.PermanentError``. A Kubernetes API answer decides which: 400, 403 and 422 mean the
API server will never accept the object as sent (the rendering or a policy is wrong; a
retry changes nothing), so the failure is recorded in the object's status and the
handler stops. Anything else (the API server away, 409 on a namespace being deleted,
429, 5xx, no answer at all) may pass, and the handler is retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

import kopf

from sless.errors import SlessError
from sless.kube import answer_of
from sless.operator.state import Operator

#: answers of an object the API server will never accept as sent
REFUSED = frozenset({400, 403, 422})


async def cluster_failure(
    error: SlessError,
    *,
    refused: str,
    failed: str,
    delay: float,
    record: Callable[[str], Awaitable[None]],
    permanent: Collection[int] = REFUSED,
) -> kopf.PermanentError | kopf.TemporaryError:
    """The kopf error to raise for a failed API call (``raise await ... from error``).

    ``refused``: what the cluster refused, for a permanent failure, whose message is first
    passed to ``record`` (the object's status); ``failed``: what failed, for a temporary
    one, retried after ``delay`` seconds."""
    answer = answer_of(error)
    if answer is not None and answer.status in permanent:
        message = f"{refused}: {answer or error}"
        await record(message)
        return kopf.PermanentError(message)
    return kopf.TemporaryError(f"{failed}: {answer or error}", delay=delay)


def failed_status(
    op: Operator, kind: str, namespace: str | None, name: str, status: dict[str, Any]
) -> Callable[[str], Awaitable[None]]:
    """A ``record`` for :func:`cluster_failure`: the object's phase ``Failed``, with why."""

    async def record(message: str) -> None:
        await op.patch_status(
            kind, namespace, name, status, {"phase": "Failed", "message": message}
        )

    return record

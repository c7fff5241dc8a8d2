"""A Function's status as the operator writes it when something fails: phase Failed, a
``Ready`` condition that says why, and the message cut short.
"""

from __future__ import annotations

from typing import Any

from sless.models import Phase
from sless.operator.state import Operator, condition

KIND = "Function"


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]


async def fail(
    op: Operator,
    ns: str,
    name: str,
    status: dict[str, Any],
    reason: str,
    message: str,
    **extra: Any,
) -> None:
    conditions = condition(status.get("conditions") or [], "Ready", False, reason, message)
    await op.patch_status(
        KIND,
        ns,
        name,
        status,
        {
            "phase": Phase.FAILED.value,
            "message": _short(message),
            "conditions": conditions,
            **extra,
        },
    )

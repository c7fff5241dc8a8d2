"""A Function's status as the operator writes it when something fails: phase Failed, a
``Ready`` condition that says why, and the message cut short.

Every message that reaches a status is plain text first (``plain``): a build log, a
scheduler's reason or a termination message comes from a container the tenant's code
ran in, and its colour codes or other terminal control sequences would reach the
tenant's terminal through ``sless`` (or garble it). A long message keeps its head (the
line that says what failed) and its tail.
"""

from __future__ import annotations

import re
from typing import Any

from sless.models import Phase
from sless.operator.state import Operator, condition

KIND = "Function"


# ANSI CSI / OSC / two-byte escape sequences, then any other control character but \n, \t.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_HEAD = 300


def plain(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (\\r → \\n)."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def _short(text: str, limit: int = 2000) -> str:
    if len(text) <= limit:
        return text
    head = text[:_HEAD]
    return head + "\n...\n" + text[-(limit - _HEAD) :]


async def fail(
    op: Operator,
    ns: str,
    name: str,
    status: dict[str, Any],
    reason: str,
    message: str,
    **extra: Any,
) -> None:
    message = plain(message)
    conditions = condition(status.get("conditions") or [], "Ready", False, reason, _short(message))
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

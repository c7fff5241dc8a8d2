"""What a caller asks of an asynchronous call, in its headers.

``X-Sless-Async: true`` or ``Prefer: respond-async`` queues the call; ``X-Sless-Retries: N``
(with it) asks for at most ``N + 1`` attempts. The value is parsed strictly (digits only,
at most 9999): it is capped at the platform's ``max_attempts`` by the queue
(``sless.events.queueing``), so a caller can ask for fewer attempts, never more. Like every
``X-Sless-*`` field it is the platform's and never reaches the function
(``sless.backends.headers``).
"""

from __future__ import annotations

from sless.errors import BadRequest


def wants_async(headers: list[tuple[bytes, bytes]]) -> bool:
    """``X-Sless-Async: true`` or ``Prefer: respond-async`` (RFC 7240 section 4.1)."""
    for key, value in headers:
        if key == b"x-sless-async":
            return value.strip().lower() in (b"true", b"1", b"yes")
        if key == b"prefer":
            tokens = (part.split(b"=")[0].strip().lower() for part in value.split(b","))
            if b"respond-async" in tokens:
                return True
    return False


def attempts_asked(headers: list[tuple[bytes, bytes]]) -> int:
    """The attempts ``X-Sless-Retries: N`` asks of a queued call (``N + 1``); 0: the
    platform's own ``max_attempts`` (the queue caps any other value there)."""
    for key, value in headers:
        if key == b"x-sless-retries":
            text = value.strip()
            # digits only: no sign, no spaces, no underscores (int() takes "1_0")
            if not text.isdigit() or len(text) > 4:
                raise BadRequest("X-Sless-Retries must be an integer from 0 to 9999")
            return int(text) + 1
    return 0

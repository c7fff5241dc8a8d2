"""Per-tenant rate and concurrency limits, and a brake on failed authentication.

Token buckets (rate ``r`` per second, capacity ``burst``) refilled lazily on each check:
one dict lookup and a little arithmetic per call, no task, no lock (the gateway runs on
one event loop and a check never awaits). State lives in the memory of one gateway
process: with N replicas a tenant gets up to N times its limits, which is documented in
docs/SECURITY.md.

Keys are bounded: tenants and namespaces are checked to exist before they are limited,
and client addresses are pruned (idle buckets first) above ``_MAX_KEYS``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from sless.config import LimitsSettings
from sless.errors import TooManyRequests

_MAX_KEYS = 50_000


class TokenBucket:
    __slots__ = ("burst", "rate", "tokens", "updated")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.updated = now

    def _refill(self, now: float) -> None:
        if now > self.updated:
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now

    def take(self, now: float) -> float:
        """Take one token; 0.0 if taken, else the seconds until one is available."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate if self.rate > 0 else math.inf

    def wait(self, now: float) -> float:
        """Seconds until one token is available, without taking it."""
        self._refill(now)
        if self.tokens >= 1.0:
            return 0.0
        return (1.0 - self.tokens) / self.rate if self.rate > 0 else math.inf

    def full(self, now: float) -> bool:
        self._refill(now)
        return self.tokens >= self.burst


def _seconds(wait: float) -> int:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return 3600 if math.isinf(wait) else max(1, math.ceil(wait))


class RateLimiter:
    """One token bucket per key."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, TokenBucket] = {}

    def _bucket(self, key: str, now: float) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _MAX_KEYS:
                self._prune(now)
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, now)
        return bucket

    def _prune(self, now: float) -> None:
        # a full bucket holds no information: dropping it changes nothing
        for key in [k for k, b in self._buckets.items() if b.full(now)]:
            del self._buckets[key]
        if len(self._buckets) >= _MAX_KEYS:
            self._buckets.clear()

    def take(self, key: str) -> float:
        """Take a token for ``key``: 0.0, or the seconds to wait (nothing is taken)."""
        now = self._clock()
        return self._bucket(key, now).take(now)

    def state(self, key: str) -> tuple[int, int]:
        """``(remaining, reset_s)``: whole tokens left for ``key``, seconds until full."""
        now = self._clock()
        bucket = self._bucket(key, now)
        bucket._refill(now)
        missing = bucket.burst - bucket.tokens
        reset = 0 if missing <= 0 or self.rate <= 0 else math.ceil(missing / self.rate)
        return int(bucket.tokens), reset

    def wait(self, key: str) -> float:
        now = self._clock()
        bucket = self._buckets.get(key)
        return 0.0 if bucket is None else bucket.wait(now)


class ConcurrencyLimiter:
    """At most ``limit`` concurrent holders per key."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._running: dict[str, int] = {}

    def acquire(self, key: str) -> bool:
        running = self._running.get(key, 0)
        if running >= self.limit:
            return False
        self._running[key] = running + 1
        return True

    def release(self, key: str) -> None:
        running = self._running.get(key, 0) - 1
        if running > 0:
            self._running[key] = running
        else:
            self._running.pop(key, None)

    def running(self, key: str) -> int:
        return self._running.get(key, 0)


class Limits:
    """The gateway's limits, built once from ``LimitsSettings``."""

    def __init__(
        self, settings: LimitsSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.api = RateLimiter(settings.api_rate_per_s, settings.api_burst, clock)
        self.invoke = RateLimiter(settings.invoke_rate_per_s, settings.invoke_burst, clock)
        self.concurrency = ConcurrencyLimiter(settings.invoke_concurrency)
        per_minute = settings.failed_auth_per_minute
        self.failed_auth = RateLimiter(per_minute / 60.0, per_minute, clock)

    def check_api(self, tenant: str) -> None:
        wait = self.api.take(tenant)
        if wait:
            raise TooManyRequests("API rate limit exceeded", retry_after=_seconds(wait))

    def api_headers(self, tenant: str) -> dict[str, str]:
        """``RateLimit`` and ``RateLimit-Policy`` (draft-ietf-httpapi-ratelimit-headers) of
        the tenant's API bucket: ``q`` requests per ``w`` seconds (the burst, refilled at
        the rate), ``r`` left now, ``t`` seconds until the bucket is full again."""
        remaining, reset = self.api.state(tenant)
        burst = self.api.burst
        window = math.ceil(burst / self.api.rate) if self.api.rate > 0 else 0
        return {
            "RateLimit-Policy": f'"api";q={int(burst)};w={window}',
            "RateLimit": f'"api";r={remaining};t={reset}',
        }

    def check_invoke(self, namespace: str) -> None:
        wait = self.invoke.take(namespace)
        if wait:
            raise TooManyRequests("invocation rate limit exceeded", retry_after=_seconds(wait))

    def start_invocation(self, namespace: str) -> None:
        """Count a running invocation; pair with ``end_invocation`` in a ``finally``."""
        if not self.concurrency.acquire(namespace):
            raise TooManyRequests("too many concurrent invocations", retry_after=1)

    def end_invocation(self, namespace: str) -> None:
        self.concurrency.release(namespace)

    def check_address(self, address: str) -> None:
        """Refuse an address that used up its failed authentication attempts."""
        wait = self.failed_auth.wait(address)
        if wait:
            raise TooManyRequests(
                "too many failed authentication attempts", retry_after=_seconds(wait)
            )

    def failed_attempt(self, address: str) -> None:
        self.failed_auth.take(address)

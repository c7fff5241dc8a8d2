"""Token buckets, concurrency slots and the failed-authentication brake, on a test clock."""

from __future__ import annotations

import pytest

from sless.config import LimitsSettings
from sless.errors import TooManyRequests
from sless.tenancy.limits import ConcurrencyLimiter, Limits, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_the_burst_then_refills_at_the_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=2.0, burst=3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0
    clock.now += 100  # never more than the burst
    assert [limiter.take("a") for _ in range(4)][-1] > 0


def test_keys_have_their_own_buckets() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, clock=Clock())
    assert limiter.take("acme") == 0.0
    assert limiter.take("acme") > 0
    assert limiter.take("beta") == 0.0


def test_wait_does_not_take() -> None:
    limiter = RateLimiter(rate=1.0, burst=1, clock=Clock())
    assert limiter.wait("a") == 0.0
    assert limiter.wait("a") == 0.0
    assert limiter.take("a") == 0.0
    assert limiter.wait("a") == pytest.approx(1.0)


def test_api_limit_raises_429_with_whole_seconds() -> None:
    clock = Clock()
    limits = Limits(LimitsSettings(api_rate_per_s=0.4, api_burst=1), clock=clock)
    limits.check_api("acme")
    with pytest.raises(TooManyRequests) as refused:
        limits.check_api("acme")
    assert refused.value.status == 429
    assert refused.value.retry_after == 3  # 2.5 s rounded up
    limits.check_api("beta")


def test_zero_rate_never_refills() -> None:
    limits = Limits(LimitsSettings(invoke_rate_per_s=0.0, invoke_burst=1), clock=Clock())
    limits.check_invoke("sless-acme")
    with pytest.raises(TooManyRequests) as refused:
        limits.check_invoke("sless-acme")
    assert refused.value.retry_after == 3600


def test_concurrency_slots_are_released() -> None:
    slots = ConcurrencyLimiter(2)
    assert slots.acquire("a")
    assert slots.acquire("a")
    assert not slots.acquire("a")
    assert slots.acquire("b")
    slots.release("a")
    assert slots.running("a") == 1
    assert slots.acquire("a")
    slots.release("a")
    slots.release("a")
    assert slots.running("a") == 0


def test_invocation_concurrency_limit() -> None:
    limits = Limits(LimitsSettings(invoke_concurrency=1))
    limits.start_invocation("sless-acme")
    with pytest.raises(TooManyRequests):
        limits.start_invocation("sless-acme")
    limits.start_invocation("sless-beta")
    limits.end_invocation("sless-acme")
    limits.start_invocation("sless-acme")


def test_failed_attempts_block_an_address_then_expire() -> None:
    clock = Clock()
    limits = Limits(LimitsSettings(failed_auth_per_minute=3), clock=clock)
    for _ in range(3):
        limits.check_address("10.0.0.1")
        limits.failed_attempt("10.0.0.1")
    with pytest.raises(TooManyRequests) as refused:
        limits.check_address("10.0.0.1")
    assert refused.value.retry_after == 20  # one attempt back every 60/3 s
    limits.check_address("10.0.0.2")
    clock.now += 20
    limits.check_address("10.0.0.1")


def test_too_many_requests_says_at_least_one_second() -> None:
    assert TooManyRequests("x", retry_after=0).retry_after == 1
    assert TooManyRequests("x", retry_after=7).details == {"retry_after": 7}

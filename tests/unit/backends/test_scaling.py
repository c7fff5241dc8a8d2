"""The autoscaling decision (pure): instances from the calls in flight, within bounds; and
what the operator keeps of it when it re-applies a Deployment."""

from __future__ import annotations

import pytest

from sless.backends.kubernetes.scaling import bounds, desired_replicas, gateway_identity
from sless.models import FunctionSpec
from sless.policies import replicas_for


@pytest.mark.parametrize(
    ("demand", "expected"),
    [(0, 1), (1, 1), (2, 1), (3, 2), (5, 3), (8, 4), (9, 4), (500, 4)],
)
def test_desired_replicas_is_demand_over_concurrency_within_bounds(
    demand: int, expected: int
) -> None:
    assert desired_replicas(demand, 2, 1, 4) == expected


def test_bounds_keep_one_pod_and_obey_the_quota() -> None:
    spec = FunctionSpec(min_instances=0, max_instances=8)
    assert bounds(spec, quota=10) == (1, 8)
    assert bounds(spec, quota=3) == (1, 3)
    assert bounds(FunctionSpec(min_instances=2, max_instances=8), quota=1) == (2, 2)


def test_the_operator_keeps_the_autoscalers_replicas_within_the_spec() -> None:
    spec = FunctionSpec(min_instances=1, max_instances=5)
    assert replicas_for(spec, enabled=True) == 1  # a new Deployment
    assert replicas_for(spec, enabled=True, current=3) == 3
    assert replicas_for(spec, enabled=True, current=9) == 5  # max_instances lowered
    assert replicas_for(spec, enabled=True, current=9, max_instances=2) == 2  # the quota
    assert replicas_for(spec, enabled=True, current=0) == 1  # an http trigger turned on
    assert replicas_for(spec, enabled=False, current=3) == 0


def test_min_instances_above_max_instances_is_refused() -> None:
    with pytest.raises(ValueError, match="may not exceed max_instances"):
        FunctionSpec(min_instances=3, max_instances=2)


def test_gateway_identity_is_a_short_dns_label() -> None:
    assert gateway_identity("sless-gateway-7d9f_ABC.local") == "sless-gateway-7d9f-abc-local"
    assert len(gateway_identity("x" * 80)) == 50
    assert gateway_identity("---") == "gateway"

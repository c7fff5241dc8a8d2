"""The builds namespace's NetworkPolicies (sless.policies.builds_network_policies): nothing
reaches a build pod; a build pod reaches the cluster DNS and the provider's build egress
(registry, S3) only, never the metadata address, and the API server only where a rule
names its address exactly (then on that rule's port alone)."""

from __future__ import annotations

import pytest

from sless.config import KubernetesSettings
from sless.policies import EgressRefused, builds_network_policies

API = ["10.0.0.1/32"]


def _by_name(settings: KubernetesSettings) -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in builds_network_policies(settings, API)}


def test_without_build_egress_builds_reach_only_dns() -> None:
    policies = _by_name(KubernetesSettings())
    assert set(policies) == {"sless-default-deny", "sless-allow-dns"}
    deny = policies["sless-default-deny"]
    assert deny["metadata"]["namespace"] == "sless-builds"
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    [rule] = policies["sless-allow-dns"]["spec"]["egress"]
    assert rule["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]


def test_build_egress_is_one_port_per_range_with_the_api_server_excepted() -> None:
    settings = KubernetesSettings(build_egress=["10.0.0.0/16:5000", "10.0.30.7/32:443"])
    egress = _by_name(settings)["sless-allow-build-egress"]["spec"]["egress"]
    assert egress == [
        {
            "to": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.1/32"]}}],
            "ports": [{"protocol": "TCP", "port": 5000}],
        },
        {
            "to": [{"ipBlock": {"cidr": "10.0.30.7/32"}}],
            "ports": [{"protocol": "TCP", "port": 443}],
        },
    ]


def test_a_registry_on_the_api_servers_host_is_reached_on_its_port_only() -> None:
    settings = KubernetesSettings(build_egress=["10.0.0.1/32:5000"])
    egress = _by_name(settings)["sless-allow-build-egress"]["spec"]["egress"]
    assert egress == [
        {"to": [{"ipBlock": {"cidr": "10.0.0.1/32"}}], "ports": [{"protocol": "TCP", "port": 5000}]}
    ]


@pytest.mark.parametrize("rule", ["169.254.169.254/32:80", "169.254.0.0/16:80"])
def test_the_metadata_address_is_never_reachable_from_a_build(rule: str) -> None:
    settings = KubernetesSettings(build_egress=[rule])
    if rule.endswith("/32:80"):
        with pytest.raises(EgressRefused):
            builds_network_policies(settings, API)
        return
    [rule_out] = _by_name(settings)["sless-allow-build-egress"]["spec"]["egress"]
    assert "169.254.169.254/32" in rule_out["to"][0]["ipBlock"]["except"]


def test_a_host_name_is_refused() -> None:
    with pytest.raises(EgressRefused):
        builds_network_policies(KubernetesSettings(build_egress=["s3.example.com:443"]), API)

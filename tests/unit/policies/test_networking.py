"""NetworkPolicies: default deny, gateway-only ingress, DNS only to cluster DNS, egress
allowlists with the metadata and API addresses always excepted."""

from __future__ import annotations

import pytest

from sless.config import KubernetesSettings
from sless.policies import (
    EgressRefused,
    allow_dns,
    allow_gateway_ingress,
    allow_invoker_egress,
    default_deny,
    function_egress_policy,
    parse_egress,
    tenant_network_policies,
)


def test_default_deny_selects_every_pod_both_ways() -> None:
    policy = default_deny("sless-acme")
    assert policy["metadata"]["namespace"] == "sless-acme"
    assert policy["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def test_ingress_from_gateway_pods_only_on_the_runtime_port() -> None:
    spec = allow_gateway_ingress("sless-acme", KubernetesSettings())["spec"]
    assert spec["podSelector"] == {"matchLabels": {"sless.kube5s.ru/component": "function"}}
    assert spec["policyTypes"] == ["Ingress"]
    [rule] = spec["ingress"]
    # one peer with both selectors: both must match (two peers would be an OR)
    assert rule["from"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "sless-system"}},
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "sless-gateway"}},
        }
    ]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8080}]


def test_dns_only_to_kube_dns() -> None:
    spec = allow_dns("sless-acme", KubernetesSettings())["spec"]
    assert spec["podSelector"] == {}
    assert spec["policyTypes"] == ["Egress"]
    [rule] = spec["egress"]
    assert rule["to"] == [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ]
    assert rule["ports"] == [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def test_invoker_pods_reach_the_gateway_only() -> None:
    spec = allow_invoker_egress("sless-acme", KubernetesSettings(), 8080)["spec"]
    assert spec["podSelector"] == {"matchLabels": {"sless.kube5s.ru/component": "invoker"}}
    assert spec["egress"][0]["ports"] == [{"protocol": "TCP", "port": 8080}]
    names = [p["metadata"]["name"] for p in tenant_network_policies("n", KubernetesSettings(), 1)]
    assert names == [
        "sless-default-deny",
        "sless-allow-gateway-ingress",
        "sless-allow-dns",
        "sless-allow-invoker-egress",
    ]


def test_no_egress_means_no_allow_policy() -> None:
    assert function_egress_policy("sless-acme", "f", [], ["10.96.0.1"]) is None


def test_cidr_egress_excepts_metadata_and_api_server() -> None:
    policy = function_egress_policy(
        "sless-acme",
        "f",
        ["0.0.0.0/0:443", "10.0.0.0/8:5432", "[::]/0:443"],
        ["10.96.0.1", "203.0.113.5"],
    )
    assert policy is not None
    assert policy["metadata"]["name"] == "fn-f-egress"
    assert policy["spec"]["podSelector"] == {
        "matchLabels": {
            "sless.kube5s.ru/function": "f",
            "sless.kube5s.ru/component": "function",
            "sless.kube5s.ru/track": "current",
        }
    }
    assert policy["spec"]["policyTypes"] == ["Egress"]
    # a traffic target's pods get their own version's allowlist, never the current one's
    other = function_egress_policy("sless-acme", "f", ["0.0.0.0/0:443"], [], version="v2")
    assert other is not None
    assert other["metadata"]["name"] == "fn-f-v2-egress"
    assert other["spec"]["podSelector"]["matchLabels"]["sless.kube5s.ru/track"] == "v2"
    world, private, v6 = policy["spec"]["egress"]
    assert world == {
        "to": [
            {
                "ipBlock": {
                    "cidr": "0.0.0.0/0",
                    "except": ["10.96.0.1/32", "169.254.169.254/32", "203.0.113.5/32"],
                }
            }
        ],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    assert private["to"][0]["ipBlock"] == {"cidr": "10.0.0.0/8", "except": ["10.96.0.1/32"]}
    assert private["ports"] == [{"protocol": "TCP", "port": 5432}]
    assert v6["to"][0]["ipBlock"] == {"cidr": "::/0", "except": ["fd00:ec2::254/128"]}


def test_a_cidr_without_blocked_addresses_has_no_except() -> None:
    policy = function_egress_policy("n", "f", ["192.0.2.7:80"], ["10.96.0.1"])
    assert policy is not None
    assert policy["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "192.0.2.7/32"}}]


@pytest.mark.parametrize(
    "rule", ["169.254.169.254:80", "169.254.169.254/32:80", "[fd00:ec2::254]:80", "10.96.0.1:443"]
)
def test_egress_to_only_blocked_addresses_is_refused(rule: str) -> None:
    with pytest.raises(EgressRefused, match="never allowed"):
        function_egress_policy("n", "f", [rule], ["10.96.0.1"])


def test_host_name_egress_is_refused_in_kubernetes_mode() -> None:
    with pytest.raises(EgressRefused, match="host names cannot be enforced"):
        parse_egress("api.example.com:443")
    assert str(parse_egress("10.1.2.3:80")[0]) == "10.1.2.3/32"

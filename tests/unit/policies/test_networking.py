"""NetworkPolicies: default deny, gateway-only ingress, DNS only to cluster DNS, egress
allowlists with the metadata and API addresses always excepted, and the private ranges
the provider does not allow."""

from __future__ import annotations

import ipaddress

import pytest

from sless.config import KubernetesSettings
from sless.policies import (
    EgressRefused,
    allow_dns,
    allow_gateway_ingress,
    allow_invoker_egress,
    builds_network_policies,
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
        # the provider allows its tenants 10/8: the API server in it is excepted still
        private_allowed=[ipaddress.ip_network("10.0.0.0/8")],
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
                    # the never-reachable classes, the private ranges not allowed, the API
                    # server (inside the allowed 10/8 too); 255.255.255.255 lies in 240/4
                    "except": [
                        "0.0.0.0/8",
                        "10.96.0.1/32",
                        "100.64.0.0/10",
                        "127.0.0.0/8",
                        "169.254.0.0/16",
                        "172.16.0.0/12",
                        "192.168.0.0/16",
                        "198.18.0.0/15",
                        "203.0.113.5/32",
                        "224.0.0.0/4",
                        "240.0.0.0/4",
                    ],
                }
            }
        ],
        "ports": [{"protocol": "TCP", "port": 443}],
    }
    assert private["to"][0]["ipBlock"] == {"cidr": "10.0.0.0/8", "except": ["10.96.0.1/32"]}
    assert private["ports"] == [{"protocol": "TCP", "port": 5432}]
    # the metadata address fd00:ec2::254 lies in the unique local range fc00::/7
    assert v6["to"][0]["ipBlock"] == {
        "cidr": "::/0",
        "except": ["::/128", "::1/128", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"],
    }


def test_private_ranges_the_provider_does_not_allow_are_excepted_or_refused() -> None:
    """A tenant's allowlist never opens the provider's private network by itself: a rule
    wholly inside a private range is refused, naming the setting; a wider one excepts it."""
    for rule in ("10.0.0.0/8:5432", "10.1.2.3:5432", "192.168.0.0/24:80", "[fd12::1]:6379"):
        with pytest.raises(EgressRefused, match="SLESS_EGRESS_PRIVATE_ALLOWED"):
            function_egress_policy("n", "f", [rule], [])
    policy = function_egress_policy(
        "n", "f", ["10.0.0.0/8:5432"], [], private_allowed=[ipaddress.ip_network("10.20.0.0/16")]
    )
    assert policy is not None
    # 10/8 less the allowed 10.20/16: the rest of 10/8 is excepted
    block = policy["spec"]["egress"][0]["to"][0]["ipBlock"]
    assert block["cidr"] == "10.0.0.0/8"
    excepted = [ipaddress.ip_network(e) for e in block["except"]]
    assert not any(e.overlaps(ipaddress.ip_network("10.20.0.0/16")) for e in excepted)
    assert sum(e.num_addresses for e in excepted) == 2**24 - 2**16
    # the provider's own build egress is not a tenant's: its private ranges are allowed
    builds = builds_network_policies(
        KubernetesSettings(build_egress=["10.0.12.0/24:5000"]), ["10.96.0.1"]
    )
    assert builds[-1]["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "10.0.12.0/24"}}]


def test_a_cidr_without_blocked_addresses_has_no_except() -> None:
    policy = function_egress_policy("n", "f", ["192.0.2.7:80"], ["10.96.0.1"])
    assert policy is not None
    assert policy["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "192.0.2.7/32"}}]


@pytest.mark.parametrize(
    "rule", ["169.254.169.254:80", "169.254.169.254/32:80", "[fd00:ec2::254]:80", "10.96.0.1:443"]
)
def test_egress_to_only_blocked_addresses_is_refused(rule: str) -> None:
    with pytest.raises(EgressRefused, match=r"never (allowed|reachable)"):
        function_egress_policy(
            "n", "f", [rule], ["10.96.0.1"], private_allowed=[ipaddress.ip_network("10.0.0.0/8")]
        )


def test_host_name_egress_is_refused_in_kubernetes_mode() -> None:
    with pytest.raises(EgressRefused, match="host names cannot be enforced"):
        parse_egress("api.example.com:443")
    assert str(parse_egress("10.1.2.3:80")[0]) == "10.1.2.3/32"

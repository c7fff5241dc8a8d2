"""NetworkPolicies of a tenant namespace: deny everything, then allow exactly
gateway → function pods, pods → cluster DNS, invoker pods → gateway, and each function's
own egress allowlist.

Standards: CIS Kubernetes Benchmark 5.3.2 (every namespace has NetworkPolicies), the NSA/CISA
Kubernetes Hardening Guide ("default deny" and explicit allows), and the cloud metadata
advisories (e.g. CVE-2020-8555 class SSRF, AWS IMDS) behind the permanent exceptions for
169.254.169.254 and fd00:ec2::254.

A tenant writes its allowlist itself, so a rule never opens the provider's own network by
itself: the ranges ``sless.models.reach`` refuses (loopback, link-local, multicast; the
private, shared and reserved ranges the provider does not allow with
``SLESS_EGRESS_PRIVATE_ALLOWED``: its nodes' kubelets, cluster Services, databases), the
API server's addresses and the nodes' own (public ones too: the operator passes them with
the API server's) are the ``except`` entries of each rule's ipBlock, and a rule wholly
inside one of them is refused. The provider's own build egress is not a tenant's:
only the metadata and API addresses are excepted there.

``host:port`` egress rules cannot be expressed: a NetworkPolicy only knows addresses, and
resolving a name once at reconcile time would pin whatever the DNS answered then (and keep
allowing it after the name moves). Kubernetes mode therefore refuses them with
``EgressRefused``; the operator marks the function Failed with that message.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from sless.config import KubernetesSettings
from sless.models import EgressReach, IPNetwork
from sless.policies import labels

#: never reachable from a function, whatever its allowlist says
METADATA_CIDRS = ("169.254.169.254/32", "fd00:ec2::254/128")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class EgressRefused(ValueError):
    """An egress rule that Kubernetes mode cannot enforce or must never allow."""


def _policy(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": labels.managed()},
        "spec": spec,
    }


def _namespace_selector(namespace: str) -> dict[str, Any]:
    # kubernetes.io/metadata.name is set by the API server on every namespace and cannot
    # be forged by a tenant (who cannot label namespaces anyway)
    return {"matchLabels": {"kubernetes.io/metadata.name": namespace}}


def default_deny(namespace: str) -> dict[str, Any]:
    return _policy(
        namespace,
        "sless-default-deny",
        {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    )


def allow_gateway_ingress(namespace: str, settings: KubernetesSettings) -> dict[str, Any]:
    """Function pods accept connections on the runtime port from the gateway's pods only:
    the namespaceSelector and the podSelector are in one peer, so both must match."""
    return _policy(
        namespace,
        "sless-allow-gateway-ingress",
        {
            "podSelector": {"matchLabels": {labels.COMPONENT: "function"}},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [
                        {
                            "namespaceSelector": _namespace_selector(settings.gateway_namespace),
                            "podSelector": {"matchLabels": dict(settings.gateway_labels)},
                        }
                    ],
                    "ports": [{"protocol": "TCP", "port": labels.FUNCTION_PORT}],
                }
            ],
        },
    )


def allow_dns(namespace: str, settings: KubernetesSettings) -> dict[str, Any]:
    """DNS to the cluster DNS pods only (UDP and TCP 53): no other resolver is reachable."""
    return _policy(
        namespace,
        "sless-allow-dns",
        {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [
                        {
                            "namespaceSelector": _namespace_selector(settings.dns_namespace),
                            "podSelector": {"matchLabels": dict(settings.dns_labels)},
                        }
                    ],
                    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                }
            ],
        },
    )


def allow_invoker_egress(
    namespace: str, settings: KubernetesSettings, gateway_port: int
) -> dict[str, Any]:
    """Cron trigger and FunctionJob pods (``component: invoker``, no tenant code) may call
    the gateway, and nothing else."""
    return _policy(
        namespace,
        "sless-allow-invoker-egress",
        {
            "podSelector": {"matchLabels": {labels.COMPONENT: "invoker"}},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [
                        {
                            "namespaceSelector": _namespace_selector(settings.gateway_namespace),
                            "podSelector": {"matchLabels": dict(settings.gateway_labels)},
                        }
                    ],
                    "ports": [{"protocol": "TCP", "port": gateway_port}],
                }
            ],
        },
    )


def tenant_network_policies(
    namespace: str, settings: KubernetesSettings, gateway_port: int
) -> list[dict[str, Any]]:
    return [
        default_deny(namespace),
        allow_gateway_ingress(namespace, settings),
        allow_dns(namespace, settings),
        allow_invoker_egress(namespace, settings, gateway_port),
    ]


def parse_egress(rule: str) -> tuple[Network, int]:
    """``CIDR:port`` / ``IP:port`` / ``[IPv6]:port`` → (network, port); host names refused."""
    host, _, port = rule.rpartition(":")
    host = host.replace("[", "").replace("]", "")
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise EgressRefused(
            f"egress {rule[:80]!r}: host names cannot be enforced by NetworkPolicy in "
            "Kubernetes mode; give the address range as CIDR:port"
        ) from None
    return network, int(port)


def _exceptions(network: Network, blocked: Iterable[Network]) -> list[str]:
    """The blocked ranges inside ``network`` (none nested in another: the outer one says
    it all), in address order; raises when ``network`` lies inside one."""
    inside: set[Network] = set()
    for block in blocked:
        if block.version != network.version:
            continue
        if network.subnet_of(block):  # type: ignore[arg-type]
            raise EgressRefused(
                f"egress to {network} is never allowed (cloud metadata, the Kubernetes API"
                " or a node of the cluster)"
            )
        if block.subnet_of(network):  # type: ignore[arg-type]
            inside.add(block)
    outer = [
        b
        for b in inside
        if not any(o != b and b.subnet_of(o) for o in inside)  # type: ignore[arg-type]
    ]
    return [str(b) for b in sorted(outer, key=lambda n: (n.network_address, n.prefixlen))]


def blocked_networks(api_server_addresses: Iterable[str]) -> list[Network]:
    """The metadata addresses plus the API server's (single addresses or CIDRs)."""
    out: list[Network] = [ipaddress.ip_network(c) for c in METADATA_CIDRS]
    for address in api_server_addresses:
        out.append(ipaddress.ip_network(address, strict=False))
    return out


def function_egress_policy(
    namespace: str,
    name: str,
    egress: list[str],
    api_server_addresses: Iterable[str],
    *,
    version: str | None = None,
    private_allowed: Iterable[IPNetwork] = (),
) -> dict[str, Any] | None:
    """The function's own allowlist as one policy (None when the list is empty: the
    default deny then applies). Each rule is one ipBlock on one TCP port, with the ranges
    the provider refuses (``sless.models.reach``: ``private_allowed`` are the private
    ranges it opens to tenants) and the API server addresses it contains excepted; a rule
    wholly inside one is refused. It selects one track of the function's pods (the current
    Deployment's, or with ``version`` that version's): each version of a traffic split
    gets its own allowlist, never another version's."""
    if not egress:
        return None
    rules = _egress_rules(egress, api_server_addresses, reach=EgressReach(tuple(private_allowed)))
    object_name = (
        labels.function_object_name(name)
        if version is None
        else labels.version_object_name(name, version)
    )
    return _policy(
        namespace,
        f"{object_name}-egress",
        {
            "podSelector": {
                "matchLabels": labels.track_selector(name, version or labels.CURRENT_TRACK)
            },
            "policyTypes": ["Egress"],
            "egress": rules,
        },
    )


def _egress_rules(
    egress: list[str],
    api_server_addresses: Iterable[str],
    *,
    named_api_host: bool = False,
    reach: EgressReach | None = None,
) -> list[dict[str, Any]]:
    """One rule per ``CIDR:port``: an ipBlock on one TCP port, with the metadata and API
    server addresses it contains excepted (one it lies inside is refused), and with
    ``reach`` (a tenant's allowlist) every range the provider refuses too. With
    ``named_api_host`` (the provider's own build egress, never a tenant's), a rule that
    names exactly an API server address is kept: its port is all it allows there (a
    registry on a control-plane host), and the metadata addresses are refused still."""
    api = [ipaddress.ip_network(a, strict=False) for a in api_server_addresses]
    refused = blocked_networks(()) if reach is None else reach.blocked()
    rules: list[dict[str, Any]] = []
    for rule in egress:
        network, port = parse_egress(rule)
        reason = reach.network_refusal(network) if reach is not None else None
        if reason is not None:
            raise EgressRefused(f"egress {rule[:80]!r} is refused: {reason}")
        block: dict[str, Any] = {"cidr": str(network)}
        blocked = refused + [n for n in api if not (named_api_host and n == network)]
        excepted = _exceptions(network, blocked)
        if excepted:
            block["except"] = excepted
        rules.append({"to": [{"ipBlock": block}], "ports": [{"protocol": "TCP", "port": port}]})
    return rules


def builds_network_policies(
    settings: KubernetesSettings, api_server_addresses: Iterable[str]
) -> list[dict[str, Any]]:
    """The builds namespace's policies: nothing reaches a build pod, and a build pod (kaniko
    runs root and executes the install step of a tenant's dependencies) reaches only the
    cluster DNS and ``build_egress``, the registry and the code store's addresses (CIDR:port;
    the metadata addresses, and API server addresses inside a wider range, excepted).
    Empty ``build_egress``: DNS only."""
    ns = settings.builds_namespace
    policies = [default_deny(ns), allow_dns(ns, settings)]
    if settings.build_egress:
        spec = {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": _egress_rules(
                settings.build_egress, api_server_addresses, named_api_host=True
            ),
        }
        policies.append(_policy(ns, "sless-allow-build-egress", spec))
    return policies

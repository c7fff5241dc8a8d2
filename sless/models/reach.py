"""Where a tenant's egress may never go, whatever its allowlist says: the one decision.

A tenant writes its function's ``egress`` allowlist itself, so the allowlist alone cannot
keep it out of the provider's own network. Three classes of address are refused on top:

- **never**: loopback, link-local (the cloud metadata service, 169.254.169.254 and
  fd00:ec2::254), multicast, unspecified and broadcast. No setting allows them.
- **private**: RFC 1918 (10/8, 172.16/12, 192.168/16), shared CGNAT space (RFC 6598,
  100.64/10), the benchmarking range (RFC 2544, 198.18/15), reserved 240/4, IPv6 unique
  local (RFC 4193, fc00::/7) and site-local (RFC 3879, fec0::/10): the provider's databases,
  brokers, object store, kubelets and cluster services live there. Refused unless the
  provider allows a range (``SLESS_EGRESS_PRIVATE_ALLOWED``, ``EgressReach.private_allowed``).
- **own**: every address configured on the gateway machine's interfaces (embedded mode):
  its PostgreSQL, RabbitMQ, S3 or admin ports listening on ``0.0.0.0`` answer there, on a
  public address too. Refused even inside an allowed range.

An IPv6 address that carries an IPv4 one (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
``64:ff9b::a.b.c.d``, 6to4 ``2002:aabb:ccdd::``) is checked as that IPv4 address too.

Who asks: the embedded egress proxy and the gateway's callbacks for each resolved address
(``refusal``), spec validation for a CIDR or address a rule names (``network_refusal``),
and the Kubernetes egress policies for the refused ranges inside a rule's CIDR (``blocked``:
its ipBlock's ``except``). See OWASP's SSRF prevention cheat sheet and the IANA special-
purpose address registries (RFC 6890) for the classes.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from functools import cached_property

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: the setting that allows private ranges (named in every refusal it could lift)
PRIVATE_SETTING = "SLESS_EGRESS_PRIVATE_ALLOWED"


def _networks(*pairs: tuple[str, str]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(cidr), what) for cidr, what in pairs)


#: never reachable, whatever the allowlist or the provider says
NEVER = _networks(
    ("0.0.0.0/8", "unspecified"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local (cloud metadata)"),
    ("224.0.0.0/4", "multicast"),
    ("255.255.255.255/32", "broadcast"),
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("fe80::/10", "link-local"),
    ("ff00::/8", "multicast"),
    ("fd00:ec2::254/128", "cloud metadata"),
)

#: refused unless the provider allows a range of them
PRIVATE = _networks(
    ("10.0.0.0/8", "private (RFC 1918)"),
    ("172.16.0.0/12", "private (RFC 1918)"),
    ("192.168.0.0/16", "private (RFC 1918)"),
    ("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
    ("198.18.0.0/15", "reserved for benchmarking (RFC 2544)"),
    ("240.0.0.0/4", "reserved (RFC 1112)"),
    ("fc00::/7", "unique local (RFC 4193)"),
    ("fec0::/10", "site-local (RFC 3879)"),
)

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _forms(address: IPAddress) -> list[IPAddress]:
    """The address, and the IPv4 address an IPv6 one carries (mapped, NAT64, 6to4)."""
    forms: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            forms.append(address.ipv4_mapped)
        if address.sixtofour is not None:
            forms.append(address.sixtofour)
        if address in _NAT64:
            forms.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return forms


@dataclass(frozen=True)
class EgressReach:
    """The provider's rule for tenant egress: ``private_allowed`` are the private ranges
    (or parts of them) the provider opens to its tenants, ``own`` the gateway machine's
    addresses (refused even inside an allowed range)."""

    private_allowed: tuple[IPNetwork, ...] = ()
    own: frozenset[IPAddress] = field(default_factory=frozenset)

    @cached_property
    def _private_refused(self) -> tuple[tuple[IPNetwork, str], ...]:
        """``PRIVATE`` less the allowed ranges, as disjoint CIDRs (``address_exclude``
        keeps them aligned: a CIDR outside every allowed range lies inside one of them)."""
        pieces = list(PRIVATE)
        for allowed in self.private_allowed:
            kept: list[tuple[IPNetwork, str]] = []
            for piece, what in pieces:
                if piece.version != allowed.version or not piece.overlaps(allowed):
                    kept.append((piece, what))
                elif not piece.subnet_of(allowed):  # type: ignore[arg-type]
                    kept.extend((p, what) for p in piece.address_exclude(allowed))  # type: ignore[arg-type]
            pieces = kept
        return tuple(pieces)

    def refusal(self, address: IPAddress) -> str | None:
        """Why egress to ``address`` is refused, or None when the allowlist decides."""
        for form in _forms(address):
            for network, what in NEVER:
                if form in network:
                    return f"{address} is {what}: never reachable"
            if form in self.own:
                return f"{address} is an address of the gateway's own machine"
            for network, what in self._private_refused:
                if form in network:
                    return (
                        f"{address} is in {network}, {what}: refused unless the provider "
                        f"allows it ({PRIVATE_SETTING})"
                    )
        return None

    def network_refusal(self, network: IPNetwork) -> str | None:
        """Why every address of ``network`` is refused, or None when some may be reached
        (the refused ones among them are still refused, address by address)."""
        if network.num_addresses == 1:
            return self.refusal(network.network_address)
        for block, what in (*NEVER, *self._private_refused):
            if block.version == network.version and network.subnet_of(block):  # type: ignore[arg-type]
                if any(block == b for b, _ in NEVER):
                    return f"{network} lies in {block}, {what}: never reachable"
                return (
                    f"{network} lies in {block}, {what}: refused unless the provider "
                    f"allows it ({PRIVATE_SETTING})"
                )
        return None

    def blocked(self) -> list[IPNetwork]:
        """Every refused range, as CIDRs (the own addresses as single-address ones)."""
        out = [n for n, _ in NEVER] + [n for n, _ in self._private_refused]
        out += [ipaddress.ip_network(a) for a in sorted(self.own, key=_sort_key)]
        return out


def _sort_key(address: IPAddress) -> tuple[int, int]:
    return address.version, int(address)

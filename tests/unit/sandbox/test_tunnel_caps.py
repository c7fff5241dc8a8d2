"""The caps on egress proxy connections (``sless.sandbox.tunnels``): pure counting."""

from __future__ import annotations

from sless.sandbox import TunnelCaps
from sless.sandbox.tunnels import Slot


def test_the_function_cap_then_the_tenant_cap_and_release_frees_slots() -> None:
    caps = TunnelCaps(per_tenant=3, per_function=2)
    a1, a2 = caps.acquire("t", "f"), caps.acquire("t", "f")
    assert isinstance(a1, Slot)
    assert isinstance(a2, Slot)
    over_function = caps.acquire("t", "f")
    assert isinstance(over_function, str)
    assert "function f" in over_function
    assert "2" in over_function
    b1 = caps.acquire("t", "g")
    assert isinstance(b1, Slot)
    over_tenant = caps.acquire("t", "g")
    assert isinstance(over_tenant, str)
    assert "tenant t" in over_tenant
    assert "3" in over_tenant
    # another tenant has slots of its own
    assert isinstance(caps.acquire("u", "f"), Slot)
    assert caps.counts() == {"t": (3, 2), "u": (1, 0)}

    caps.release(a1)
    assert caps.held("t") == 2
    assert isinstance(caps.acquire("t", "g"), Slot)
    for slot in (a2, b1):
        caps.release(slot)
    assert caps.held("t") == 1
    assert caps.counts()["t"] == (1, 2)

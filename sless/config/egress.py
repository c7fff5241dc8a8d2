"""Tenant egress, in both modes: ``SLESS_EGRESS_<FIELD>``.

A tenant writes its function's egress allowlist; the provider decides which of its own
private ranges that allowlist may name at all (``sless.models.reach``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, IPvAnyNetwork


class EgressSettings(BaseModel):
    #: private, shared and reserved ranges (10/8, 172.16/12, 192.168/16, 100.64/10,
    #: 198.18/15, 240/4, fc00::/7, fec0::/10) tenant egress may reach, as a JSON list of
    #: CIDRs (``["10.20.0.0/16"]``); empty (the default): none. Loopback, link-local,
    #: metadata and multicast stay refused, and so do the gateway machine's own addresses
    #: inside an allowed range. Allow a tenants' range only, never the platform's own
    private_allowed: list[IPvAnyNetwork] = Field(default_factory=list)

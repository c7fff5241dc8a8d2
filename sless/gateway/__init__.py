"""The HTTP gateway: management API, uploads, admin API and the invocation proxy."""

from sless.gateway.admission import Activity, Admission, AdmissionLimits
from sless.gateway.app import Gateway, create_app
from sless.gateway.connections import ConnectionGuard, GuardLimits, listening_families
from sless.gateway.forwarded import trusted_proxies
from sless.gateway.platform import Platform

__all__ = [
    "Activity",
    "Admission",
    "AdmissionLimits",
    "ConnectionGuard",
    "Gateway",
    "GuardLimits",
    "Platform",
    "create_app",
    "listening_families",
    "trusted_proxies",
]

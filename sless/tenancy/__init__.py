"""Tenants, their tokens, auth providers, limits and quotas, and who a caller is."""

from sless.tenancy.limits import Limits
from sless.tenancy.providers import Identity, IntrospectionProvider, JWTProvider
from sless.tenancy.quotas import Quotas, Usage
from sless.tenancy.service import NewTenant, NewToken, Principal, Tenancy
from sless.tenancy.tokens import generate_token, redact, token_digest

__all__ = [
    "Identity",
    "IntrospectionProvider",
    "JWTProvider",
    "Limits",
    "NewTenant",
    "NewToken",
    "Principal",
    "Quotas",
    "Tenancy",
    "Usage",
    "generate_token",
    "redact",
    "token_digest",
]

"""Tenants, their tokens, and who a caller is."""

from sless.tenancy.service import NewTenant, NewToken, Principal, Tenancy
from sless.tenancy.tokens import generate_token, redact, token_digest

__all__ = [
    "NewTenant",
    "NewToken",
    "Principal",
    "Tenancy",
    "generate_token",
    "redact",
    "token_digest",
]

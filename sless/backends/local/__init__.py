"""Embedded mode: PostgreSQL desired state, bubblewrap workers."""

from sless.backends.local.backend import LocalBackend

__all__ = ["LocalBackend"]

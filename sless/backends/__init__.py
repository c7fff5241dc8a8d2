"""Backends: the part of sless that differs between embedded and Kubernetes mode."""

from sless.backends.base import Backend, Upstream

__all__ = ["Backend", "Upstream"]

"""Helpers several routers share (no router imports another router's helpers)."""

from __future__ import annotations

from sless.backends import Backend
from sless.errors import Invalid, NotFound


async def require_function(backend: Backend, namespace: str, function: str) -> None:
    """A trigger or job must name an existing function of the same namespace (422)."""
    try:
        await backend.get_function(namespace, function)
    except NotFound:
        raise Invalid(f"function {function!r} not found in namespace {namespace!r}") from None


async def current_version(backend: Backend, kind: str, namespace: str, name: str) -> str | None:
    """The ``resource_version`` of a trigger or job now; None when there is none."""
    try:
        if kind == "trigger":
            return (await backend.get_trigger(namespace, name)).resource_version
        return (await backend.get_job(namespace, name)).resource_version
    except NotFound:
        return None

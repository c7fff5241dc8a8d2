"""Backends: the part of sless that differs between embedded and Kubernetes mode.

Nothing outside ``backends/`` (and the CLI) names a concrete backend: the mode is chosen
here, by ``make_backend`` from the settings, and callers depend only on the protocols of
``base`` (an import-linter contract says so). ``call_function`` (one call of a function,
whatever the mode) and the proxy's header rule (``headers``) live here too, so that the
gateway and ``sless.events`` share them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sless.backends.base import (
    Backend,
    ClusterBackend,
    FunctionStore,
    Held,
    Serving,
    TenantSpaces,
    TriggerStore,
    TriggerWatch,
    TriggerWatcher,
    Upstream,
    WatchedTrigger,
)
from sless.backends.calling import (
    Response,
    Stream,
    call_function,
    call_headers,
    failure,
    open_call,
    pick,
    reason_of,
    resolve,
    route,
    without_trace_context,
)
from sless.backends.tracing import CallTrace, Tracing, parse_traceparent, valid_traceparent

if TYPE_CHECKING:
    from sless.config import Settings
    from sless.store import BlobStore


def make_backend(settings: Settings, db: Any, blobs: BlobStore) -> Backend:
    """The backend of ``settings.backend``; call ``await backend.start()`` next."""
    if settings.backend == "kubernetes":
        # imported here: the Kubernetes client loads only in this mode
        from sless.backends.kubernetes import make_backend as make_kubernetes

        return make_kubernetes(settings, db, blobs)
    from sless.backends.local import LocalBackend

    return LocalBackend(settings, db, blobs)


def make_cluster_backend(settings: Settings) -> ClusterBackend:
    """The read-only Kubernetes backend of the ``sless events`` process."""
    from sless.backends.kubernetes import KubernetesBackend

    return KubernetesBackend(settings)


__all__ = [
    "Backend",
    "CallTrace",
    "ClusterBackend",
    "FunctionStore",
    "Held",
    "Response",
    "Serving",
    "Stream",
    "TenantSpaces",
    "Tracing",
    "TriggerStore",
    "TriggerWatch",
    "TriggerWatcher",
    "Upstream",
    "WatchedTrigger",
    "call_function",
    "call_headers",
    "failure",
    "make_backend",
    "make_cluster_backend",
    "open_call",
    "parse_traceparent",
    "pick",
    "reason_of",
    "resolve",
    "route",
    "valid_traceparent",
    "without_trace_context",
]

"""Kubernetes mode: Function custom resources, invocations proxied to the functions' pods.

``make_backend`` is what the gateway calls when ``settings.backend == "kubernetes"``.
"""

from __future__ import annotations

from typing import Any

from sless.backends.base import Backend
from sless.backends.kubernetes.backend import KubernetesBackend
from sless.backends.kubernetes.triggers import IndexedTrigger, TriggerIndex
from sless.config import Settings
from sless.store import BlobStore, SecretRepository, VersionRepository, cipher_for

__all__ = ["IndexedTrigger", "KubernetesBackend", "TriggerIndex", "make_backend"]


def make_backend(settings: Settings, db: Any, blobs: BlobStore) -> Backend:
    """The backend for ``Platform.start``; call ``await backend.start()`` next.

    Desired state lives in the cluster and the operator reads the blobs; the database holds
    the tenants' secrets, which the backend copies into each function's own Secret. The
    gateway's backend autoscales: it sets the Deployments' replicas (``scaling``).
    """
    del blobs
    return KubernetesBackend(
        settings,
        secrets=SecretRepository(db, cipher_for(settings)),
        versions=VersionRepository(db),
        autoscale=True,
    )

"""The Kubernetes-mode reconciler: kopf handlers for Function, Trigger, FunctionJob and
Tenant (``sless operator``). Objects are rendered by ``sless.policies``; see handlers.py for
what reacts to what and docs/kubernetes.md for the contract with the gateway.

Run it with ``run_operator(settings)``. Without ``SLESS_KUBERNETES_OPERATOR_PEERING`` it
runs standalone: one replica. With it, replicas peer through kopf's ClusterKopfPeering of
that name: each has a distinct priority (random unless set), the highest is active and the
others pause until its record disappears (a clean exit) or expires
(``operator_peering_lifetime_s``). Every reconcile is level-based, so the replica taking
over converges to the same state.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from typing import Any

from sless.config import Settings

__all__ = ["ensure_peering", "run_operator"]


async def ensure_peering(settings: Settings) -> None:
    """The ClusterKopfPeering the replicas meet in (its CRD comes with deploy/); made here,
    so one ``kubectl apply -k deploy/`` installs everything (a custom object cannot be
    applied together with its CRD)."""
    from sless.kube import KubeApi

    k = settings.kubernetes
    api = KubeApi(k, field_manager="sless-operator")
    await api.open()
    try:
        await api.apply(
            {
                "apiVersion": "kopf.dev/v1",
                "kind": "ClusterKopfPeering",
                "metadata": {
                    "name": k.operator_peering,
                    "labels": {"app.kubernetes.io/managed-by": "sless"},
                },
            }
        )
    finally:
        await api.close()


def run_operator(
    settings: Settings,
    *,
    stop_flag: threading.Event | None = None,
    ready_flag: threading.Event | None = None,
) -> None:
    """Run until SIGINT/SIGTERM (or ``stop_flag``). Refuses to start with no sandbox
    RuntimeClass unless ``SLESS_KUBERNETES_ALLOW_NO_SANDBOX=true`` (then warns)."""
    import kopf

    from sless.operator.handlers import build_registry, check_sandbox, configure

    check_sandbox(settings)
    k = settings.kubernetes
    kopf_settings = kopf.OperatorSettings()
    configure(kopf_settings, settings)
    peering: dict[str, Any] = {"standalone": True}
    if k.operator_peering:
        kopf_settings.peering.mandatory = True
        kopf_settings.peering.lifetime = k.operator_peering_lifetime_s
        kopf_settings.peering.stealth = True  # no keep-alive lines in the log
        priority = k.operator_priority
        if priority is None:
            priority = secrets.randbelow(2**31 - 1) + 1
        peering = {"standalone": False, "peering_name": k.operator_peering, "priority": priority}
        asyncio.run(ensure_peering(settings))
    kopf.run(
        registry=build_registry(settings),
        settings=kopf_settings,
        clusterwide=True,
        stop_flag=stop_flag,
        ready_flag=ready_flag,
        memo=kopf.Memo(),
        liveness_endpoint=k.operator_liveness_url,
        **peering,
    )

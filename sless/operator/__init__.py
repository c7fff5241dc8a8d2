"""The Kubernetes-mode reconciler: kopf handlers for Function, Trigger, FunctionJob and
Tenant (``sless operator``). Objects are rendered by ``sless.policies``; see handlers.py for
what reacts to what and docs/kubernetes.md for the contract with the gateway.

Run it with ``run_operator(settings)``: one replica (``standalone``: no kopf peering, so a
Deployment with ``replicas: 1`` and ``strategy: Recreate``); every reconcile is level-based,
so a restart converges to the same state.
"""

from __future__ import annotations

import threading

from sless.config import Settings

__all__ = ["run_operator"]


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
    kopf_settings = kopf.OperatorSettings()
    configure(kopf_settings, settings)
    kopf.run(
        registry=build_registry(settings),
        settings=kopf_settings,
        standalone=True,
        clusterwide=True,
        stop_flag=stop_flag,
        ready_flag=ready_flag,
        memo=kopf.Memo(),
    )

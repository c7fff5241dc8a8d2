"""The sandbox RuntimeClass (gVisor's ``runsc`` handler): function code is untrusted, so it
runs behind a user-space kernel (NSA/CISA Kubernetes Hardening Guide, "sandboxed
runtimes"). A provider may name another class (Kata) through settings."""

from __future__ import annotations

from typing import Any

from sless.policies import labels


def runtime_class(name: str = "gvisor", handler: str = "runsc") -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name, "labels": labels.managed()},
        "handler": handler,
    }

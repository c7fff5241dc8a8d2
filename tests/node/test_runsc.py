"""Pods on the real node: the RuntimeClass gvisor of deploy/ runs them under runsc, and the
proof comes from inside the pod (gVisor's kernel log), not from the pod spec."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.node.support import RESTRICTED_CONTAINER, ROOT, Node, wait_for

PROBE = (
    "import os, subprocess, sys\n"
    "print('version:', open('/proc/version').read().strip())\n"
    "print('uname:', os.uname().release)\n"
    "log = subprocess.run(['dmesg'], capture_output=True, text=True).stdout\n"
    "print('dmesg:', log.replace('\\n', ' | '))\n"
)

# the node's first build pulls and unpacks images: minutes, not the default 120 s
pytestmark = pytest.mark.timeout(900)


def _ensure_runtime_class(api: Any) -> None:
    body = yaml.safe_load(Path(ROOT / "deploy" / "runtimeclass.yaml").read_text())
    try:
        client.NodeV1Api(api).create_runtime_class(body)
    except ApiException as exc:
        if exc.status != 409:
            raise


def _namespace(api: Any) -> str:
    name = f"node-{uuid.uuid4().hex[:6]}"
    client.CoreV1Api(api).create_namespace(
        {
            "metadata": {
                "name": name,
                "labels": {
                    "pod-security.kubernetes.io/enforce": "restricted",
                    "pod-security.kubernetes.io/enforce-version": "latest",
                },
            }
        }
    )
    return name


def _run_probe(api: Any, node: Node, namespace: str, runtime_class: str | None) -> str:
    core = client.CoreV1Api(api)
    wait_for(
        "the default service account", lambda: core.list_namespaced_service_account(namespace).items
    )
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "probe",
                "image": node.runtime_image("python3.11"),
                "command": ["python3", "-c", PROBE],
                "securityContext": RESTRICTED_CONTAINER,
                "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}},
            }
        ],
    }
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    name = f"probe-{runtime_class or 'runc'}"
    core.create_namespaced_pod(namespace, {"metadata": {"name": name}, "spec": spec})

    def finished() -> str | None:
        phase = core.read_namespaced_pod(name, namespace).status.phase
        return phase if phase in ("Succeeded", "Failed") else None

    phase = wait_for(f"pod {name} to finish", finished)
    logs: str = core.read_namespaced_pod_log(name, namespace)
    assert phase == "Succeeded", logs
    return logs


def test_a_pod_with_runtime_class_gvisor_runs_under_the_gvisor_kernel(api: Any, node: Node) -> None:
    _ensure_runtime_class(api)
    namespace = _namespace(api)
    try:
        gvisor = _run_probe(api, node, namespace, "gvisor")
        runc = _run_probe(api, node, namespace, None)
    finally:
        client.CoreV1Api(api).delete_namespace(namespace)
    host_release = Path("/proc/sys/kernel/osrelease").read_text().strip()
    # gVisor's own kernel log, and a kernel release that is not the machine's
    assert "Starting gVisor" in gvisor, gvisor
    assert f"uname: {host_release}" not in gvisor, gvisor
    # the same image under runc (the default handler) sees the machine's kernel
    assert f"uname: {host_release}" in runc, runc
    assert "Starting gVisor" not in runc, runc

"""Admission in a tenant namespace on the real cluster: Pod Security "restricted" refuses a
privileged pod and a hostPath pod; the platform's ValidatingAdmissionPolicy
(deploy/admission.yaml) refuses a pod that does not name the RuntimeClass gvisor. The
compliant pod, the function pod the operator renders, is admitted."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from sless import policies
from sless.config import Settings
from sless.models import FunctionSpec
from tests.node.stack import Gateway, onboard
from tests.node.support import Node, wait_for

DIGEST = "sha256:" + "0" * 64

# the node's first build pulls and unpacks images: minutes, not the default 120 s
pytestmark = pytest.mark.timeout(900)


def _pod(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_privileged_hostpath_and_unsandboxed_pods_are_refused(
    stack: tuple[Gateway, Settings], api: Any, node: Node
) -> None:
    gateway, settings = stack
    tenant = "admit" + uuid.uuid4().hex[:6]
    onboard(gateway, tenant).close()
    ns = f"sless-{tenant}"
    core = client.CoreV1Api(api)
    wait_for("the tenant's service account", lambda: core.list_namespaced_service_account(ns).items)
    image = f"{node.runtime_image('python3.11').rsplit(':', 1)[0]}@{DIGEST}"
    good = policies.function_pod_spec(FunctionSpec(), ns, "x", image, settings.kubernetes)
    assert good["runtimeClassName"] == "gvisor"
    core.create_namespaced_pod(ns, _pod("ok", good), dry_run="All")

    privileged = copy.deepcopy(good)
    privileged["containers"][0]["securityContext"].update(
        privileged=True, allowPrivilegeEscalation=True
    )
    hostpath = copy.deepcopy(good)
    hostpath["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    hostpath["containers"][0]["volumeMounts"].append({"name": "host", "mountPath": "/host"})
    unsandboxed = copy.deepcopy(good)
    del unsandboxed["runtimeClassName"]
    refusals = {}
    for name, spec, expect in (
        ("privileged", privileged, "privileged"),
        ("hostpath", hostpath, "hostPath"),
        ("unsandboxed", unsandboxed, "runtimeClassName gvisor"),
    ):
        with pytest.raises(ApiException) as refused:
            core.create_namespaced_pod(ns, _pod(name, spec), dry_run="All")
        refusals[name] = (refused.value.status, refused.value.body)
        assert refused.value.status in (403, 422), refusals[name]
        assert expect in refused.value.body, refusals[name]

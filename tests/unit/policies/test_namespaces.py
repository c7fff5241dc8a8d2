"""Tenant namespace, quota, limits, service account; the builds namespace; plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sless.config import KubernetesSettings, TenantPlan
from sless.policies import (
    builds_namespace,
    check_role_binding,
    check_tenant_namespace,
    function_service_account,
    gateway_role_binding,
    limit_range,
    plan_for,
    resource_quota,
    runtime_class,
    tenant_namespace,
    tenant_objects,
)

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def test_tenant_namespace_enforces_restricted() -> None:
    namespace = tenant_namespace("acme", "default")
    assert namespace["metadata"]["name"] == "sless-acme"
    assert namespace["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "sless",
        "sless.kube5s.ru/tenant": "acme",
        "sless.kube5s.ru/plan": "default",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "latest",
    }
    assert check_tenant_namespace(namespace) == []
    namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "baseline"
    assert [v.path for v in check_tenant_namespace(namespace)] == [
        "metadata.labels[pod-security.kubernetes.io/enforce]"
    ]


def test_builds_namespace_is_baseline_and_warns_restricted() -> None:
    labels = builds_namespace(KubernetesSettings())["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"


def test_function_service_account_mounts_no_token() -> None:
    sa = function_service_account("sless-acme")
    assert sa["metadata"] == {
        "name": "sless-function",
        "namespace": "sless-acme",
        "labels": {"app.kubernetes.io/managed-by": "sless"},
    }
    assert sa["automountServiceAccountToken"] is False


def test_quota_from_plan() -> None:
    plan = TenantPlan(max_pods=7, max_cpu_millis=1500, max_memory_mb=2048)
    hard = resource_quota("sless-acme", plan)["spec"]["hard"]
    assert hard == {
        "pods": "7",
        "requests.cpu": "1500m",
        "limits.cpu": "1500m",
        "requests.memory": "2048Mi",
        "limits.memory": "2048Mi",
        "requests.ephemeral-storage": "4096Mi",
        "limits.ephemeral-storage": "4096Mi",
        "services": "20",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
        "configmaps": "10",
        "secrets": "10",
        "persistentvolumeclaims": "0",
        "count/jobs.batch": "20",
        "count/cronjobs.batch": "20",
    }


def test_limit_range_defaults_and_max() -> None:
    [limits] = limit_range("sless-acme", TenantPlan(), 64)["spec"]["limits"]
    assert limits == {
        "type": "Container",
        "default": {"cpu": "250m", "memory": "128Mi", "ephemeral-storage": "64Mi"},
        "defaultRequest": {"cpu": "250m", "memory": "128Mi", "ephemeral-storage": "64Mi"},
        "max": {"cpu": "4000m", "memory": "4096Mi"},
    }


def test_plans() -> None:
    settings = KubernetesSettings()
    assert plan_for(settings, None) == ("default", settings.plans["default"])
    assert plan_for(settings, "large")[1].max_pods == 100
    with pytest.raises(ValueError, match="unknown plan"):
        plan_for(settings, "platinum")


def test_tenant_objects_in_order_and_only_the_gateways_role_binding() -> None:
    settings = KubernetesSettings()
    objects = tenant_objects("acme", None, settings, 8080)
    assert [(o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("Namespace", "sless-acme"),
        ("ServiceAccount", "sless-function"),
        ("RoleBinding", "sless-gateway"),
        ("ResourceQuota", "sless-quota"),
        ("LimitRange", "sless-limits"),
        ("NetworkPolicy", "sless-default-deny"),
        ("NetworkPolicy", "sless-allow-gateway-ingress"),
        ("NetworkPolicy", "sless-allow-dns"),
        ("NetworkPolicy", "sless-allow-invoker-egress"),
    ]
    assert all(o["metadata"].get("namespace", "sless-acme") == "sless-acme" for o in objects)
    bindings = [o for o in objects if "Role" in o["kind"]]
    assert len(bindings) == 1
    assert check_role_binding(bindings[0], settings) == []
    assert bindings[0]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "sless-gateway-tenant",
    }
    assert bindings[0]["subjects"] == [
        {"kind": "ServiceAccount", "name": "sless-gateway", "namespace": "sless-system"}
    ]


def test_role_binding_check_refuses_a_function_account_or_another_role() -> None:
    settings = KubernetesSettings()
    binding = gateway_role_binding("sless-acme", settings)
    tenant_pods = {"kind": "ServiceAccount", "name": "sless-function", "namespace": "sless-acme"}
    widened = {**binding, "subjects": [*binding["subjects"], tenant_pods]}
    assert [v.path for v in check_role_binding(widened, settings)] == ["subjects"]
    admin = {**binding, "roleRef": {**binding["roleRef"], "name": "cluster-admin"}}
    assert [v.path for v in check_role_binding(admin, settings)] == ["roleRef"]
    renamed = {**binding, "metadata": {**binding["metadata"], "name": "other"}}
    assert [v.path for v in check_role_binding(renamed, settings)] == ["metadata.name"]


def test_runtime_class_matches_deploy() -> None:
    import yaml

    assert runtime_class() == {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "gvisor", "labels": {"app.kubernetes.io/managed-by": "sless"}},
        "handler": "runsc",
    }
    assert yaml.safe_load((DEPLOY / "runtimeclass.yaml").read_text()) == runtime_class()
    assert json.dumps(runtime_class())

"""Tenant namespaces: Pod Security labels, ResourceQuota, LimitRange, the function
ServiceAccount; and the builds namespace.

Standards:
- Pod Security Standards, "restricted" profile, enforced by the built-in Pod Security
  admission through namespace labels (kubernetes.io/docs/concepts/security/pod-security-admission);
  warn and audit at the same level so that nothing is silently allowed.
- CIS Kubernetes Benchmark 5.1.5/5.1.6 (default service accounts not used, tokens not
  mounted), 5.2 (pod security policies per namespace), 5.7.1 (namespaces as boundaries).
- Kubernetes multi-tenancy benchmarks MTB-PL1-CC-CPI-1 (quotas on every tenant namespace).

Nothing in a tenant namespace may talk to the API server: the function ServiceAccount has
no binding and mounts no token. The one RoleBinding rendered here is the gateway's: it
binds the ClusterRole ``sless-gateway-tenant`` (deploy/rbac/gateway.yaml: the functions'
Secrets and the Deployments' ``scale``) to the gateway's ServiceAccount in this namespace
only, so the gateway reaches Secrets in tenant namespaces and nowhere else (least
privilege, CIS 5.1.2: minimise access to secrets; no cluster-wide secrets grant).
"""

from __future__ import annotations

from typing import Any

from sless.config import KubernetesSettings, TenantPlan
from sless.models import namespace_for
from sless.policies import labels
from sless.policies.violations import Violation

POD_SECURITY = "pod-security.kubernetes.io"
_MODES = ("enforce", "warn", "audit")


def pod_security_labels(level: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for mode in _MODES:
        out[f"{POD_SECURITY}/{mode}"] = level
        out[f"{POD_SECURITY}/{mode}-version"] = "latest"
    return out


def tenant_namespace(tenant: str, plan: str) -> dict[str, Any]:
    """Namespace ``sless-<tenant>`` enforcing Pod Security "restricted"."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": namespace_for(tenant),
            "labels": {
                **labels.managed(),
                labels.TENANT: tenant,
                f"{labels.DOMAIN}/plan": plan,
                **pod_security_labels("restricted"),
            },
        },
    }


def builds_namespace(settings: KubernetesSettings) -> dict[str, Any]:
    """Namespace of kaniko build Jobs. kaniko unpacks images as root, which "restricted"
    forbids; "baseline" still refuses privileged, host namespaces and hostPath (PSS
    baseline), and warn/audit stay at "restricted" so the gap is visible."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": settings.builds_namespace,
            "labels": {
                **labels.managed(),
                f"{POD_SECURITY}/enforce": "baseline",
                f"{POD_SECURITY}/enforce-version": "latest",
                f"{POD_SECURITY}/warn": "restricted",
                f"{POD_SECURITY}/warn-version": "latest",
                f"{POD_SECURITY}/audit": "restricted",
                f"{POD_SECURITY}/audit-version": "latest",
            },
        },
    }


def function_service_account(namespace: str) -> dict[str, Any]:
    """The identity of function pods: no token is ever mounted (CIS 5.1.6)."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": labels.FUNCTION_SERVICE_ACCOUNT,
            "namespace": namespace,
            "labels": labels.managed(),
        },
        "automountServiceAccountToken": False,
    }


#: the ClusterRole (deploy/rbac/gateway.yaml) the gateway holds in each tenant namespace
GATEWAY_TENANT_ROLE = "sless-gateway-tenant"
#: the name of its RoleBinding there (the operator may bind nothing else)
GATEWAY_ROLE_BINDING = "sless-gateway"


def gateway_role_binding(namespace: str, settings: KubernetesSettings) -> dict[str, Any]:
    """The gateway's rights in one tenant namespace: write the functions' Secrets, set the
    Deployments' replicas. Bound here, never cluster-wide."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": GATEWAY_ROLE_BINDING,
            "namespace": namespace,
            "labels": labels.managed(),
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": GATEWAY_TENANT_ROLE,
        },
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": settings.gateway_service_account,
                "namespace": settings.gateway_namespace,
            }
        ],
    }


def check_role_binding(binding: dict[str, Any], settings: KubernetesSettings) -> list[Violation]:
    """Allowlist: the only RoleBinding the operator applies in a tenant namespace binds
    ``sless-gateway-tenant`` to the gateway's ServiceAccount, and to nothing else (a
    function's ServiceAccount bound to it could read the tenant's Secrets)."""
    out: list[Violation] = []
    if binding.get("metadata", {}).get("name") != GATEWAY_ROLE_BINDING:
        out.append(Violation("metadata.name", f"must be {GATEWAY_ROLE_BINDING!r}"))
    ref = binding.get("roleRef") or {}
    if ref.get("kind") != "ClusterRole" or ref.get("name") != GATEWAY_TENANT_ROLE:
        out.append(Violation("roleRef", f"must be the ClusterRole {GATEWAY_TENANT_ROLE!r}"))
    wanted = {
        "kind": "ServiceAccount",
        "name": settings.gateway_service_account,
        "namespace": settings.gateway_namespace,
    }
    if binding.get("subjects") != [wanted]:
        out.append(Violation("subjects", "must be the gateway's ServiceAccount only"))
    return out


def resource_quota(namespace: str, plan: TenantPlan) -> dict[str, Any]:
    """Everything a tenant can consume, capped (MTB: block tenant resource starvation).
    LoadBalancer and NodePort Services are 0: functions are reached through the gateway only."""
    cpu = f"{plan.max_cpu_millis}m"
    memory = f"{plan.max_memory_mb}Mi"
    storage = f"{plan.max_ephemeral_storage_mb}Mi"
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "sless-quota", "namespace": namespace, "labels": labels.managed()},
        "spec": {
            "hard": {
                "pods": str(plan.max_pods),
                "requests.cpu": cpu,
                "limits.cpu": cpu,
                "requests.memory": memory,
                "limits.memory": memory,
                "requests.ephemeral-storage": storage,
                "limits.ephemeral-storage": storage,
                "services": str(plan.max_services),
                "services.loadbalancers": "0",
                "services.nodeports": "0",
                "configmaps": str(plan.max_configmaps),
                "secrets": str(plan.max_secrets),
                "persistentvolumeclaims": str(plan.max_persistentvolumeclaims),
                "count/jobs.batch": str(plan.max_jobs),
                "count/cronjobs.batch": str(plan.max_cronjobs),
            }
        },
    }


def limit_range(namespace: str, plan: TenantPlan, tmp_mb: int) -> dict[str, Any]:
    """Defaults for containers that state nothing (the quota covers limits, so every
    container needs them) and a per-container maximum."""
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "sless-limits", "namespace": namespace, "labels": labels.managed()},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "default": {
                        "cpu": f"{plan.default_cpu_millis}m",
                        "memory": f"{plan.default_memory_mb}Mi",
                        "ephemeral-storage": f"{tmp_mb}Mi",
                    },
                    "defaultRequest": {
                        "cpu": f"{plan.default_cpu_millis}m",
                        "memory": f"{plan.default_memory_mb}Mi",
                        "ephemeral-storage": f"{tmp_mb}Mi",
                    },
                    "max": {
                        "cpu": f"{plan.container_max_cpu_millis}m",
                        "memory": f"{plan.container_max_memory_mb}Mi",
                    },
                }
            ]
        },
    }


def plan_for(settings: KubernetesSettings, plan: str | None) -> tuple[str, TenantPlan]:
    """The named plan, or the default one; ValueError for a plan the provider never defined."""
    name = plan or settings.default_plan
    if name not in settings.plans:
        raise ValueError(f"unknown plan {name[:63]!r}")
    return name, settings.plans[name]


def check_tenant_namespace(namespace: dict[str, Any]) -> list[Violation]:
    """Allowlist: every Pod Security mode is "restricted" (PSS restricted; CIS 5.2)."""
    found = namespace.get("metadata", {}).get("labels", {})
    out: list[Violation] = []
    for mode in _MODES:
        key = f"{POD_SECURITY}/{mode}"
        if found.get(key) != "restricted":
            out.append(Violation(f"metadata.labels[{key}]", "must be 'restricted'"))
    return out


def tenant_objects(
    tenant: str, plan: str | None, settings: KubernetesSettings, gateway_port: int
) -> list[dict[str, Any]]:
    """Everything the operator applies for a Tenant, namespace first. ValueError for an
    unknown plan."""
    from sless.policies.networking import tenant_network_policies

    plan_name, limits = plan_for(settings, plan)
    namespace = namespace_for(tenant)
    return [
        tenant_namespace(tenant, plan_name),
        function_service_account(namespace),
        gateway_role_binding(namespace, settings),
        resource_quota(namespace, limits),
        limit_range(namespace, limits, settings.function_tmp_mb),
        *tenant_network_policies(namespace, settings, gateway_port),
    ]

"""Tenant (cluster-scoped): namespace ``sless-<tenant>`` with Pod Security "restricted",
ResourceQuota and LimitRange of the plan, the NetworkPolicies, the function
ServiceAccount and the gateway's RoleBinding (the functions' Secrets and the Deployments'
scale, in this namespace only), all rendered by ``sless.policies`` and server-side
applied. The namespace is owned by the Tenant: deleting the Tenant deletes the namespace
and everything in it."""

from __future__ import annotations

from typing import Any

import kopf
from pydantic import ValidationError

from sless.errors import SlessError
from sless.models import TenantSpec, check_tenant_name, namespace_for
from sless.operator.failing import cluster_failure, failed_status
from sless.operator.state import Operator, with_owner
from sless.policies import check_role_binding, check_tenant_namespace, tenant_objects

KIND = "Tenant"


async def reconcile(op: Operator, body: dict[str, Any]) -> None:
    name = body["metadata"]["name"]
    status: dict[str, Any] = dict(body.get("status") or {})
    k = op.settings.kubernetes
    async with op.locked(KIND, "", name):
        try:
            check_tenant_name(name)
            spec = TenantSpec.model_validate(body.get("spec") or {})
            objects = tenant_objects(name, spec.plan, k, op.settings.gateway.port)
        except (ValidationError, ValueError) as e:
            message = f"invalid tenant: {str(e)[:500]}"
            await op.patch_status(KIND, None, name, status, {"phase": "Failed", "message": message})
            raise kopf.PermanentError(message) from e
        namespace = objects[0]
        violations = check_tenant_namespace(namespace)
        for obj in objects:
            if obj["kind"] == "RoleBinding":
                violations += check_role_binding(obj, k)
        if violations:  # the renderer and its checker disagree: never apply
            message = "; ".join(map(str, violations))
            raise kopf.PermanentError(message)
        try:
            await op.api.apply(with_owner(namespace, body))
            for obj in objects[1:]:
                await op.api.apply(obj)
        except SlessError as e:
            # 403/409 on a namespace being deleted, API down...: all pass
            raise await cluster_failure(
                e,
                refused="the cluster refused the tenant's objects",
                failed="applying failed",
                delay=k.retry_delay_s,
                record=failed_status(op, KIND, None, name, status),
                permanent={400, 422},
            ) from e
        plan = namespace["metadata"]["labels"].get("sless.kube5s.ru/plan")
        await op.patch_status(
            KIND,
            None,
            name,
            status,
            {"phase": "Ready", "message": "", "namespace": namespace_for(name), "plan": plan},
        )

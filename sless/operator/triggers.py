"""Trigger: ``http`` → the function is reachable (its Deployment scaled to 0 while the
trigger is disabled); ``cron`` → a CronJob that POSTs to the function through the gateway,
suspended (not deleted) while disabled; ``rabbitmq`` → consumed by the ``sless events``
process (nothing to create here: the status says whether it is consumed)."""

from __future__ import annotations

import contextlib
from typing import Any

import kopf
from pydantic import ValidationError

from sless.errors import SlessError
from sless.kube import object_path
from sless.models import FunctionResourceSpec, TriggerSpec
from sless.operator import deploying
from sless.operator.failing import cluster_failure, failed_status
from sless.operator.state import Operator, with_owner
from sless.policies import check_pod_spec, cron_job, labels, sandbox_runtime_class

KIND = "Trigger"


def _cronjob_path(ns: str, trigger: str) -> str:
    return object_path("batch/v1", "CronJob", ns, labels.cronjob_name(trigger))


async def reconcile(op: Operator, body: dict[str, Any], old_function: str | None = None) -> None:
    meta = body["metadata"]
    ns, name = meta["namespace"], meta["name"]
    status: dict[str, Any] = dict(body.get("status") or {})
    async with op.locked(KIND, ns, name):
        try:
            spec = TriggerSpec.model_validate(body.get("spec") or {})
        except ValidationError as e:
            message = f"invalid trigger: {str(e)[:500]}"
            await op.patch_status(KIND, ns, name, status, {"phase": "Failed", "message": message})
            raise kopf.PermanentError(message) from e
        if spec.type != "cron":
            await op.api.delete(_cronjob_path(ns, name))
        if spec.type in ("http", "rabbitmq"):
            await op.patch_status(
                KIND,
                ns,
                name,
                status,
                {
                    "phase": "Active" if spec.enabled else "Suspended",
                    "message": "",
                    "cronjob": None,
                },
            )
        else:
            await _cron(op, body, spec, status)
    for function in {spec.function, old_function} - {None}:
        assert function is not None
        await deploying.sync_replicas(op, ns, function)


async def _cron(
    op: Operator, body: dict[str, Any], spec: TriggerSpec, status: dict[str, Any]
) -> None:
    k = op.settings.kubernetes
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    target = await op.api.get(op.cr_path("Function", ns, spec.function))
    timeout_s = FunctionResourceSpec().timeout_s
    if target is not None:
        with contextlib.suppress(ValidationError):
            timeout_s = FunctionResourceSpec.model_validate(target.get("spec") or {}).timeout_s
    cronjob = cron_job(name, spec, ns, op.invoke_base_url(), timeout_s, k)
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    violations = check_pod_spec(pod, runtime_class=sandbox_runtime_class(k))
    if violations:
        message = "rendered CronJob violates policy: " + "; ".join(map(str, violations[:5]))
        await op.patch_status(KIND, ns, name, status, {"phase": "Failed", "message": message})
        raise kopf.PermanentError(message)
    try:
        await op.api.apply(with_owner(cronjob, body))
    except SlessError as e:
        raise await cluster_failure(
            e,
            refused="the cluster refused the CronJob",
            failed="applying the CronJob failed",
            delay=k.retry_delay_s,
            record=failed_status(op, KIND, ns, name, status),
        ) from e
    await op.patch_status(
        KIND,
        ns,
        name,
        status,
        {
            "phase": "Active" if spec.enabled else "Suspended",
            "message": "" if target is not None else f"function {spec.function} does not exist",
            "cronjob": cronjob["metadata"]["name"],
        },
    )


async def cleanup(op: Operator, body: dict[str, Any]) -> None:
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    async with op.locked(KIND, ns, name):
        await op.api.delete(_cronjob_path(ns, name))
    op.forget(KIND, ns, name)
    function = (body.get("spec") or {}).get("function")
    if isinstance(function, str):
        await deploying.sync_replicas(op, ns, function)

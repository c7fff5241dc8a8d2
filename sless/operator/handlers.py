"""kopf handlers, registered on a registry of their own (nothing at import time).

- Function, Trigger, FunctionJob, Tenant: create/update/resume run the level-based
  ``reconcile`` (kopf retries it on ``TemporaryError``, stops on ``PermanentError``); delete
  runs ``cleanup`` behind the finalizer ``sless.kube5s.ru/finalizer``.
- Watches that wake a reconcile at once instead of waiting for a retry: a build Job or a
  FunctionJob's Job that finished, and a Function whose gateway-owned ``status.phase``
  went back to Pending (a held upload released) — kopf never reacts to status changes by
  itself.
- kopf keeps its bookkeeping in annotations with the sless prefix, never in ``status``
  (which the CRD schema prunes to the documented fields). kopf's diff ignores every
  annotation under that prefix, so the gateway's ``last-call`` never runs a reconcile:
  the event watch sees it (a wake-up from zero) and so does the idle timer.
- Every handler on a resource has an explicit ``id``: kopf's default, the qualified name
  (``_register_functions.<locals>.function_changed``), becomes a progress annotation name
  that the API server refuses (422), and kopf then throttles the object: its events, the
  wake-ups among them, wait for minutes.
- Scale to zero (``SLESS_KUBERNETES_IDLE_TIMEOUT_S`` > 0): a timer per Function scales an
  idle one's Deployment to 0; a new ``last-call`` annotation (the gateway holds a call to
  a function without pods) scales it back at once.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from sless.config import Settings
from sless.kube import KubeApi, bearer_token, load_configuration
from sless.operator import building, deploying, functions, jobs, tenants, triggers
from sless.operator.contexts import BuildContexts
from sless.operator.nodes import NodeAddresses
from sless.operator.state import Operator
from sless.policies import (
    builds_namespace,
    builds_network_policies,
    labels,
    sandbox_runtime_class,
)

log = logging.getLogger("sless.operator")


def configure(kopf_settings: kopf.OperatorSettings, settings: Settings) -> None:
    domain = settings.kubernetes.group
    kopf_settings.persistence.finalizer = f"{domain}/finalizer"
    kopf_settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=domain)
    kopf_settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=domain, key="last-handled-configuration"
    )
    # the resources are known: no cluster-wide CRD/namespace scanning (and no RBAC for it)
    kopf_settings.scanning.disabled = True
    kopf_settings.posting.level = logging.WARNING
    kopf_settings.watching.server_timeout = 300
    kopf_settings.watching.client_timeout = 330
    kopf_settings.networking.request_timeout = 60


#: the field manager of everything the operator applies (server-side apply)
FIELD_MANAGER = "sless-operator"


def _op(memo: Any) -> Operator:
    op: Operator = memo["sless"]
    return op


def build_registry(settings: Settings) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    _register_lifecycle(registry, settings)
    _register_functions(registry, settings)
    _register_resources(registry, settings)
    return registry


def _register_lifecycle(registry: kopf.OperatorRegistry, settings: Settings) -> None:
    """Login (kopf's own client), start-up (our client, the builds namespace), clean-up."""
    k = settings.kubernetes
    configuration = load_configuration(k)

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        token = bearer_token(configuration)
        return kopf.ConnectionInfo(
            server=str(configuration.host),
            ca_path=configuration.ssl_ca_cert or None,
            insecure=not configuration.verify_ssl,
            scheme="Bearer" if token else None,
            token=token,
            certificate_path=configuration.cert_file or None,
            private_key_path=configuration.key_file or None,
        )

    @kopf.on.startup(registry=registry)
    async def startup(memo: Any, **_: Any) -> None:
        contexts = (
            BuildContexts(
                settings.s3,
                settings.validation.archive,
                registry=settings.validation.npm_registry,
            )
            if settings.s3.bucket
            else None
        )
        if contexts is None:
            log.warning("no S3 bucket configured (SLESS_S3_BUCKET): functions cannot be built")
        api = KubeApi(
            k, request_timeout_s=30.0, field_manager=FIELD_MANAGER, configuration=configuration
        )
        operator = Operator(settings=settings, api=api, contexts=contexts)
        try:
            await api.open()
            await api.apply(builds_namespace(k))
            # builds reach the cluster DNS and build_egress (registry, S3) only
            for policy in builds_network_policies(k, await operator.api_server_addresses()):
                await api.apply(policy)
            # before any function is reconciled: each one reads the addresses afresh
            nodes = NodeAddresses(await operator.node_addresses())
        except BaseException:
            await api.close()  # kopf retries the startup with a fresh client
            raise
        if not k.build_egress:
            log.warning(
                "SLESS_KUBERNETES_BUILD_EGRESS is empty: build pods reach only the cluster DNS,"
                " so builds cannot fetch their code or push images"
            )
        memo["sless"] = operator
        memo["sless_nodes"] = nodes

    # a node that joins (or leaves, or changes address) changes what every function's
    # egress policy excepts (sless.operator.nodes)
    @kopf.on.event("v1", "nodes", id="node_event", registry=registry)
    async def node_event(memo: Any, **_: Any) -> None:
        # kopf runs the start-up handler, which sets both, before any watch
        nodes: NodeAddresses = memo["sless_nodes"]
        await nodes.changed(_op(memo))

    @kopf.on.cleanup(registry=registry)
    async def cleanup(memo: Any, **_: Any) -> None:
        if "sless" in memo:
            await _op(memo).api.close()


def _register_functions(registry: kopf.OperatorRegistry, settings: Settings) -> None:
    """Functions, and the build and FunctionJob Jobs the operator made for them."""
    k = settings.kubernetes
    group, version = k.group, k.version

    @kopf.on.resume(group, version, "functions", id="function_changed", registry=registry)
    @kopf.on.create(group, version, "functions", id="function_changed", registry=registry)
    @kopf.on.update(group, version, "functions", id="function_changed", registry=registry)
    async def function_changed(body: Any, memo: Any, **_: Any) -> None:
        await functions.reconcile(_op(memo), dict(body))

    @kopf.on.delete(group, version, "functions", id="function_deleted", registry=registry)
    async def function_deleted(body: Any, memo: Any, **_: Any) -> None:
        await functions.cleanup(_op(memo), dict(body))

    @kopf.on.event(group, version, "functions", id="function_event", registry=registry)
    async def function_event(body: Any, memo: Any, type: str | None, **_: Any) -> None:
        op = _op(memo)
        meta = body.get("metadata") or {}
        last_call = (meta.get("annotations") or {}).get(labels.LAST_CALL_ANNOTATION)
        key = (str(meta.get("namespace")), str(meta.get("name")))
        if type == "DELETED":
            op.last_calls.pop(key, None)
        elif last_call and op.last_calls.get(key) != last_call:
            op.last_calls[key] = last_call
            log.debug("function %s/%s: called at %s", *key, last_call)
            await deploying.sync_replicas(op, *key)  # a wake-up: the gateway holds a call
        status = body.get("status") or {}
        code = (body.get("spec") or {}).get("code") or {}
        released = (
            status.get("phase") == "Pending"
            and code.get("sha256")
            and (status.get("observed_sha256") != code.get("sha256"))
        )
        if type == "MODIFIED" and released:
            await _quietly(functions.reconcile(op, dict(body)))

    if k.idle_timeout_s > 0:
        # a few checks per idle timeout: a function is scaled down within ~1/4 of it
        every = min(60.0, max(1.0, k.idle_timeout_s / 4))

        @kopf.timer(
            group, version, "functions", interval=every, id="function_idle", registry=registry
        )
        async def function_idle(body: Any, memo: Any, **_: Any) -> None:
            meta = body["metadata"]
            await deploying.sync_replicas(_op(memo), meta["namespace"], meta["name"])

    @kopf.on.event(
        "batch",
        "v1",
        "jobs",
        labels={labels.MANAGED_BY: labels.MANAGER},
        id="job_event",
        registry=registry,
    )
    async def job_event(body: Any, memo: Any, **_: Any) -> None:
        job = dict(body)
        job_labels = job["metadata"].get("labels") or {}
        if building.job_state(job) == "running":
            return
        op = _op(memo)
        if job_labels.get(labels.COMPONENT) == "build":
            ns, name = job_labels.get(labels.NAMESPACE), job_labels.get(labels.FUNCTION)
            if job["metadata"].get("namespace") != k.builds_namespace or not ns or not name:
                return
            target = await op.api.get(op.cr_path("Function", ns, name))
            if target is not None:
                await _quietly(functions.reconcile(op, target))
        elif job_labels.get(labels.FUNCTION_JOB):
            await jobs.record_completion(op, job)


def _register_resources(registry: kopf.OperatorRegistry, settings: Settings) -> None:
    """Triggers, FunctionJobs and Tenants."""
    group, version = settings.kubernetes.group, settings.kubernetes.version

    @kopf.on.resume(group, version, "triggers", id="trigger_changed", registry=registry)
    @kopf.on.create(group, version, "triggers", id="trigger_changed", registry=registry)
    @kopf.on.update(group, version, "triggers", id="trigger_changed", registry=registry)
    async def trigger_changed(body: Any, memo: Any, old: Any = None, **_: Any) -> None:
        old_function = ((old or {}).get("spec") or {}).get("function")
        await triggers.reconcile(_op(memo), dict(body), old_function=old_function)

    @kopf.on.delete(group, version, "triggers", id="trigger_deleted", registry=registry)
    async def trigger_deleted(body: Any, memo: Any, **_: Any) -> None:
        await triggers.cleanup(_op(memo), dict(body))

    @kopf.on.resume(group, version, "functionjobs", id="function_job_changed", registry=registry)
    @kopf.on.create(group, version, "functionjobs", id="function_job_changed", registry=registry)
    @kopf.on.update(group, version, "functionjobs", id="function_job_changed", registry=registry)
    async def function_job_changed(body: Any, memo: Any, **_: Any) -> None:
        await jobs.reconcile(_op(memo), dict(body))

    @kopf.on.resume(group, version, "tenants", id="tenant_changed", registry=registry)
    @kopf.on.create(group, version, "tenants", id="tenant_changed", registry=registry)
    @kopf.on.update(group, version, "tenants", id="tenant_changed", registry=registry)
    async def tenant_changed(body: Any, memo: Any, **_: Any) -> None:
        await tenants.reconcile(_op(memo), dict(body))


async def _quietly(reconciling: Any) -> None:
    """A wake-up reconcile: its Temporary/PermanentError is already in the status, and the
    kopf handler of the object retries on its own."""
    try:
        await reconciling
    except (kopf.TemporaryError, kopf.PermanentError) as e:
        log.debug("wake-up reconcile: %s", e)


def check_sandbox(settings: Settings) -> None:
    """Refuse to start without a sandbox RuntimeClass unless allowed; warn every start."""
    if sandbox_runtime_class(settings.kubernetes) is None:
        log.warning(
            "SLESS_KUBERNETES_ALLOW_NO_SANDBOX=true: function pods run WITHOUT a sandbox "
            "RuntimeClass; never do this with untrusted code"
        )

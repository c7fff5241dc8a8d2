"""Kubernetes mode: where builds and functions run, the tenant plans, autoscaling and
scale to zero, and the operator's peering.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class TenantPlan(BaseModel):
    """What one tenant namespace may use (ResourceQuota) and per-container defaults
    (LimitRange). A function container asks for ``cpu_millis``/``memory_mb`` of its spec."""

    max_pods: int = 20
    max_cpu_millis: int = 4000
    max_memory_mb: int = 4096
    max_ephemeral_storage_mb: int = 4096
    max_services: int = 20
    max_configmaps: int = 10
    max_secrets: int = 10
    max_jobs: int = 20
    max_cronjobs: int = 20
    max_persistentvolumeclaims: int = 0
    #: LimitRange: defaults for containers that state nothing, and the per-container maximum
    default_cpu_millis: int = 250
    default_memory_mb: int = 128
    container_max_cpu_millis: int = 4000
    container_max_memory_mb: int = 4096


def _default_plans() -> dict[str, TenantPlan]:
    return {
        "default": TenantPlan(),
        "large": TenantPlan(
            max_pods=100,
            max_cpu_millis=32000,
            max_memory_mb=65536,
            max_ephemeral_storage_mb=32768,
            max_services=100,
            max_jobs=100,
            max_cronjobs=100,
        ),
    }


class KubernetesSettings(BaseModel):
    """Kubernetes mode (``SLESS_BACKEND=kubernetes``): ``SLESS_KUBERNETES_<FIELD>``."""

    #: kubeconfig file; unset = in-cluster service account, then ~/.kube/config
    kubeconfig: Path | None = None
    #: custom resource group of Function, Trigger, FunctionJob and Tenant
    group: str = "sless.kube5s.ru"
    version: str = "v1"
    #: where kaniko build Jobs run; never a tenant namespace
    builds_namespace: str = "sless-builds"
    #: namespace and pod labels of the gateway (NetworkPolicies allow ingress from it)
    gateway_namespace: str = "sless-system"
    #: the gateway's ServiceAccount (in gateway_namespace): each tenant namespace binds it
    #: the functions' Secrets and the Deployments' scale (deploy/rbac/gateway.yaml)
    gateway_service_account: str = "sless-gateway"
    gateway_labels: dict[str, str] = Field(
        default_factory=lambda: {"app.kubernetes.io/name": "sless-gateway"}
    )
    #: image registry that builds push to, e.g. registry.example.com/sless
    registry: str = "registry.sless-system.svc:5000/sless"
    #: Secret (in builds_namespace only) with the registry's docker config
    registry_secret: str = "sless-registry"  # noqa: S105 - a Secret's name
    kaniko_image: str = "gcr.io/kaniko-project/executor:v1.23.2"
    #: the registry speaks plain HTTP (kaniko's --insecure/--insecure-pull): only for a
    #: registry reachable on the node alone, e.g. the test node's (tools/kube-testenv)
    registry_insecure: bool = False
    #: base images of the runtimes (runtimes/<runtime>/Dockerfile builds them)
    runtime_images: dict[str, str] = Field(
        default_factory=lambda: {
            "python3.11": "registry.sless-system.svc:5000/sless/runtime-python3.11:0.1.0",
            "nodejs20": "registry.sless-system.svc:5000/sless/runtime-nodejs20:0.1.0",
        }
    )
    #: RuntimeClass of function pods; empty refuses to start unless allow_no_sandbox
    runtime_class: str = "gvisor"
    allow_no_sandbox: bool = False
    #: seconds a build may take, waiting for a node included; then it fails and says why
    build_timeout_s: int = Field(default=900, ge=10)
    #: kaniko's requests: a build waits until a node has this much unreserved (its status
    #: then says ``waiting for a node: ...``); its limits cap what it may use
    build_cpu_millis: int = Field(default=500, ge=50)
    build_memory_mb: int = Field(default=1024, ge=128)
    build_cpu_limit_millis: int = Field(default=2000, ge=50)
    build_memory_limit_mb: int = Field(default=4096, ge=128)
    #: Secret in builds_namespace with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY for kaniko's
    #: S3 build context (only there: tenant namespaces never see it)
    build_s3_secret: str = "sless-build-s3"  # noqa: S105 - a Secret name
    #: what build pods may reach besides the cluster DNS, as ``CIDR:port``: the registry
    #: and the S3 endpoint (``10.0.12.0/24:5000``); the API server and metadata addresses
    #: are always excepted. Empty: builds reach nothing (they then fail, saying where)
    build_egress: list[str] = Field(default_factory=list)
    #: RuntimeClass of build pods (kaniko runs root: under gVisor that is a user-space
    #: kernel's root); empty: the cluster's default runtime
    build_runtime_class: str = "gvisor"
    #: lines of a failed build's log kept in the Function's status message
    build_log_tail_lines: int = 20
    #: image of cron trigger and FunctionJob pods: it only makes one HTTP call (curl >= 8.3)
    invoker_image: str = "curlimages/curl:8.11.1"
    #: size limit of a function pod's /tmp (emptyDir, counted as ephemeral storage)
    function_tmp_mb: int = 64
    #: cluster DNS pods (the only DNS servers tenant pods may reach)
    dns_namespace: str = "kube-system"
    dns_labels: dict[str, str] = Field(default_factory=lambda: {"k8s-app": "kube-dns"})
    #: the Kubernetes API's addresses (CIDRs), never reachable from function pods; the
    #: operator adds the ``kubernetes`` Service's and endpoints' addresses it finds
    api_server_cidrs: list[str] = Field(default_factory=list)
    #: tenant plans (ResourceQuota / LimitRange); a Tenant without ``spec.plan`` gets
    #: ``default_plan``
    plans: dict[str, TenantPlan] = Field(default_factory=_default_plans)
    default_plan: str = "default"
    #: seconds between re-checks while waiting for something that will pass
    retry_delay_s: float = 10.0
    #: autoscaling (the gateway sets each Deployment's replicas from the calls in flight):
    #: how often it decides, and how long demand must stay low before it scales down
    autoscale_interval_s: float = Field(default=2.0, gt=0, le=60)
    scale_down_delay_s: float = Field(default=60.0, ge=0, le=3600)
    #: this gateway's name in its demand Lease (in gateway_namespace); unset: the host
    #: name, which is the pod's name. Every gateway replica needs its own
    identity: str | None = None
    #: base URL that cron trigger and FunctionJob pods POST to (``<url>/fn/<ns>/<name>``);
    #: unset = gateway.public_url, else the gateway Service in gateway_namespace
    invoke_base_url: str | None = None
    #: scale to zero: a function with ``min_instances: 0`` and no call for this many seconds
    #: has its Deployment scaled to 0 by the operator; the gateway holds the next call
    #: while it wakes it (0 = never: at least one pod always runs)
    idle_timeout_s: float = 300.0
    #: how long the gateway holds a call to a function scaled to zero before it answers
    #: 503 (the pod must be scheduled, pulled and Ready within it)
    activation_timeout_s: float = 90.0
    #: kopf peering of operator replicas: the name of a ClusterKopfPeering (deploy/platform/
    #: has ``sless-operator``); the replica with the highest priority is active, the others
    #: wait. Unset: standalone, run one replica only
    operator_peering: str | None = None
    #: this replica's priority (unset: random, so no two replicas tie: kopf pauses all
    #: replicas of one priority)
    operator_priority: int | None = None
    #: seconds a replica's peering record counts as alive: a replica killed without its
    #: clean exit is taken over after about this long (a clean exit: at once)
    operator_peering_lifetime_s: int = 20
    #: kopf's liveness endpoint (``/healthz``) for the operator's probes, e.g.
    #: ``http://0.0.0.0:8081/healthz``; unset: none
    operator_liveness_url: str | None = None

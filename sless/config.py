"""Typed settings, grouped by concern.

Every setting comes from the environment with the prefix ``SLESS_``; a group's fields are
``SLESS_<GROUP>_<FIELD>`` (``SLESS_DATABASE_URL``, ``SLESS_LLM_BASE_URL``,
``SLESS_S3_BUCKET``...); a few documented short names are aliases (``ENV_ALIASES``: the
long name wins when both are set). Settings are built once, by the CLI or a test, and
passed down: nothing below reads the environment itself, and nothing is created at
import time.

Secrets are ``SecretStr`` so that a settings object can be logged or shown in a traceback
without leaking them.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("sless", appauthor=False))


class DatabaseSettings(BaseModel):
    """PostgreSQL. Without ``url`` an embedded server (pgserver) runs in ``data_dir/pg``."""

    url: SecretStr | None = None
    pool_min: int = 1
    pool_max: int = 10


class GatewaySettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8080
    #: largest request body accepted by ``/fn/...`` (413 above it)
    max_invoke_body_bytes: int = 6 * 1024 * 1024
    #: largest zip accepted by the upload endpoint (413 above it)
    max_upload_bytes: int = 50 * 1024 * 1024
    #: how long a clean shutdown waits for in-flight invocations
    shutdown_grace_s: float = 10.0
    #: public URL of the gateway, shown to users (defaults to http://host:port)
    public_url: str | None = None
    #: the HTTP/1.1 server of ``sless up``: granian (hyper, Rust; its I/O runs in a thread
    #: of its own), or uvicorn with httptools (llhttp, C) or h11 (pure Python). All three
    #: pass the request-smuggling tests; docs/PERFORMANCE.md has the figures that chose
    #: the default
    http: Literal["granian", "httptools", "h11"] = "granian"
    #: peers whose X-Forwarded-For names the caller (comma-separated IP addresses; empty:
    #: none): a reverse proxy on this machine by default (sless.gateway.forwarded)
    forwarded_allow_ips: str = "127.0.0.1,::1"

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses(cls, value: str) -> str:
        """Refused at start, not ignored later: a typo would trust nobody (or somebody)."""
        for entry in filter(None, (e.strip() for e in value.split(","))):
            try:
                ipaddress.ip_address(entry)
            except ValueError:
                raise ValueError(
                    f"{entry!r} is not an IP address (a comma-separated list of addresses,"
                    " e.g. 127.0.0.1,::1; empty to trust no proxy)"
                ) from None
        return value

    #: key that signs paging cursors and seals stored idempotent responses; unset: a
    #: random key generated once and kept in PostgreSQL (shared by every gateway)
    signing_key: SecretStr | None = None
    #: how long a paging cursor is accepted after it was issued
    cursor_ttl_s: int = Field(default=24 * 3600, ge=60)
    #: Idempotency-Key records: how long one is kept, and how many per tenant at most
    idempotency_ttl_s: int = Field(default=24 * 3600, ge=60)
    idempotency_max_keys: int = Field(default=10_000, ge=1)
    #: how long a call waits for a free instance when the function runs ``max_instances``
    #: instances, each at its ``concurrency``; then 429 with ``Retry-After``
    queue_timeout_s: float = Field(default=10.0, ge=0, le=300)


#: a token that a provider chooses by hand must be at least this long (the generated ones
#: are 48 characters: ``sl_a_`` and 256 random bits)
MIN_CONFIGURED_TOKEN_LENGTH = 32
TOKEN_FORMAT_HINT = (
    f"at least {MIN_CONFIGURED_TOKEN_LENGTH} printable ASCII characters, no spaces; make one"
    " with: python3 -c \"import secrets; print('sl_a_' + secrets.token_urlsafe(32))\""
)


def check_configured_token(value: SecretStr | None) -> SecretStr | None:
    """Refuse, at start, a hand-set token that would be weak or could never be typed back.

    The message never includes the value (it is a secret, and it ends up in a terminal).
    """
    if value is None:
        return None
    secret = value.get_secret_value()
    if (
        len(secret) < MIN_CONFIGURED_TOKEN_LENGTH
        or not secret.isascii()
        or not secret.isprintable()
        or any(c.isspace() for c in secret)
    ):
        raise ValueError(f"must be {TOKEN_FORMAT_HINT}")
    return value


class AdminSettings(BaseModel):
    #: provider admin token; when unset one is generated on first start, printed once
    #: and stored hashed. Set by hand, any token of ``MIN_CONFIGURED_TOKEN_LENGTH``
    #: characters or more works; a shorter one stops the start with a one-line error.
    token: SecretStr | None = None

    _check_token = field_validator("token")(check_configured_token)


class MetricsSettings(BaseModel):
    """``SLESS_METRICS_TOKEN``: a bearer token that may read ``/metrics`` (and nothing
    else), for a scraper that should not hold the admin token. Same format rules as the
    admin token."""

    token: SecretStr | None = None

    _check_token = field_validator("token")(check_configured_token)


class SecretsSettings(BaseModel):
    """``SLESS_SECRETS_KEYS``: ``id:base64key[,id:base64key...]``, the AES-256-GCM keys that
    encrypt tenant secrets at rest; the first encrypts, all decrypt (sless/store/crypto.py).
    Unset in development: a key is generated in the data dir; unset in production: refused.
    """

    keys: SecretStr | None = None


#: signature algorithms a JWKS may be used with: asymmetric only. ``none`` and the HMAC
#: family are never accepted: an HS256 token "signed" with the issuer's *public* key would
#: otherwise verify (RFC 8725 section 2.1 and 3.1, CVE-2015-9235 "algorithm confusion").
ASYMMETRIC_JWS_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)

AuthProviderName = Literal["static", "jwt", "introspection"]


def _static_only() -> list[AuthProviderName]:
    return ["static"]


class AuthSettings(BaseModel):
    """Who may call the API: ``SLESS_AUTH_<FIELD>``.

    ``providers`` are tried in order: ``static`` (the platform's own ``sl_`` tokens),
    ``jwt`` (tokens signed by the provider's cloud, verified against its JWKS) and
    ``introspection`` (RFC 7662, for opaque cloud tokens). A cloud identity names its
    tenant in ``tenant_claim``.
    """

    providers: list[AuthProviderName] = Field(default_factory=_static_only)
    #: claim that carries the tenant name (a DNS label), e.g. ``tenant`` or ``sub``
    tenant_claim: str = "tenant"
    #: onboard the tenant of the first valid cloud token that names an unknown tenant
    auto_onboard: bool = False
    #: seconds an HTTP call to the issuer (JWKS, introspection) may take
    http_timeout_s: float = 5.0
    # -- jwt
    jwks_url: str | None = None
    issuer: str | None = None
    audience: str | None = None
    algorithms: list[str] = Field(default_factory=lambda: ["RS256", "ES256"])
    #: clock skew tolerated on ``exp``, ``nbf`` and ``iat``
    leeway_s: int = 30
    #: an unknown ``kid`` refetches the JWKS at most once per this many seconds
    jwks_refresh_interval_s: float = 60.0
    #: the JWKS is refetched when older than this, even without an unknown ``kid``
    jwks_max_age_s: float = 3600.0
    # -- introspection (RFC 7662)
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    #: an active result is trusted until its ``exp``, at most this long
    introspection_ttl_s: float = 60.0
    #: an inactive result is remembered this long (stops hammering the endpoint)
    introspection_inactive_ttl_s: float = 5.0

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, value: list[str]) -> list[str]:
        refused = [a for a in value if a not in ASYMMETRIC_JWS_ALGORITHMS]
        if refused:
            raise ValueError(
                f"algorithms {refused} refused: only asymmetric algorithms may be used with"
                " a JWKS (never 'none' or HS*)"
            )
        if not value:
            raise ValueError("at least one algorithm is needed")
        return value

    @model_validator(mode="after")
    def _complete(self) -> AuthSettings:
        if not self.providers:
            raise ValueError("at least one auth provider is needed")
        if "jwt" in self.providers and not (self.jwks_url and self.issuer and self.audience):
            raise ValueError("the jwt provider needs jwks_url, issuer and audience")
        if "introspection" in self.providers and not (
            self.introspection_url and self.client_id and self.client_secret
        ):
            raise ValueError(
                "the introspection provider needs introspection_url, client_id and client_secret"
            )
        return self


class LimitsSettings(BaseModel):
    """Per-tenant limits and quotas: ``SLESS_LIMITS_<FIELD>``.

    Rates and concurrency are kept in memory by each gateway process: with N gateway
    replicas a tenant gets up to N times these numbers. The quotas (``max_*``) are counted
    from the stored functions under a per-tenant PostgreSQL lock, so they hold across
    replicas; they are the same for every tenant (tenant plans are Kubernetes-only).
    """

    #: management API requests per second per tenant (token bucket), and the burst
    api_rate_per_s: float = 50.0
    api_burst: int = 200
    #: invocations per second per tenant (token bucket), and the burst
    invoke_rate_per_s: float = 1000.0
    invoke_burst: int = 2000
    #: synchronous invocations of one tenant's functions running at once
    invoke_concurrency: int = 256
    #: failed authentication attempts per minute per client address
    failed_auth_per_minute: int = 20
    # -- quotas (both modes, checked by the gateway under a per-tenant database lock)
    #: functions one tenant may have
    max_functions: int = Field(default=50, ge=0)
    #: sum of the ``memory_mb`` of one tenant's function specs
    max_memory_mb: int = Field(default=8192, ge=0)
    #: sum of the sizes of the code zips its functions currently point at
    max_code_bytes: int = Field(default=1024 * 1024 * 1024, ge=0)
    #: instances (workers or pods) one function may scale to: its ``max_instances`` may
    #: not be set above this, and what runs is capped by it if it is lowered later
    max_instances: int = Field(default=10, ge=1)
    #: versions kept per function (the oldest beyond it are pruned with their code, except
    #: the current version and the traffic targets)
    max_versions: int = Field(default=10, ge=1, le=1000)


class S3Settings(BaseModel):
    """Code blobs go to S3 when ``bucket`` is set, else to ``data_dir/blobs``."""

    bucket: str | None = None
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    prefix: str = "code/"


class ArchiveLimits(BaseModel):
    max_files: int = 2000
    max_total_bytes: int = 200 * 1024 * 1024
    max_file_bytes: int = 50 * 1024 * 1024
    #: uncompressed / compressed size above which a member is a suspected zip bomb
    max_compression_ratio: float = 200.0
    max_path_length: int = 255
    max_depth: int = 32


class LLMSettings(BaseModel):
    """LLM review through an OpenAI-compatible API; off unless ``base_url`` and ``model``."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    #: what an error, timeout, refusal or unparsable answer turns into
    failure_policy: Literal["review", "reject", "allow"] = "review"
    timeout_s: float = 60.0
    #: tokens of code per request; larger uploads are split and every part reviewed
    token_budget: int = 12000


class ValidationSettings(BaseModel):
    archive: ArchiveLimits = Field(default_factory=ArchiveLimits)
    #: semgrep executable (its own environment; see scripts/setup)
    semgrep_bin: str = "semgrep"
    semgrep_timeout_s: float = 60.0
    #: scan small re-uploads (a few changed files) with a resident `semgrep lsp`, falling
    #: back to a one-shot scan on anything unexpected (sless/validation/resident.py)
    semgrep_resident: bool = True
    #: skip semgrep entirely (development only; the report says it did not run)
    static_enabled: bool = True


class SandboxSettings(BaseModel):
    bwrap: str = "bwrap"
    #: run functions without bubblewrap (development only; warned on every start)
    unsafe_no_sandbox: bool = False
    #: the idle window: a worker unused this long stops (down to ``min_instances``)
    idle_timeout_s: float = 300.0
    start_timeout_s: float = 20.0
    max_processes: int = 64
    max_open_files: int = 256
    tmp_size_mb: int = 64
    log_max_bytes: int = 1024 * 1024
    #: generic workers kept pre-started per runtime (Python), specialized on a function's
    #: first call instead of a cold start (sless.sandbox.prestarting); 0 turns it off
    prestart_size: int = Field(default=2, ge=0, le=32)


class BuildSettings(BaseModel):
    uv: str = "uv"
    npm: str = "npm"
    timeout_s: float = 600.0


class EventsSettings(BaseModel):
    """Cron triggers, jobs and asynchronous invocations in embedded mode:
    ``SLESS_EVENTS_<FIELD>``."""

    #: run the scheduler, the job runner and the queue worker in this gateway process
    enabled: bool = True
    #: how often the scheduler looks for due ticks (and re-reads the triggers)
    scheduler_interval_s: float = 1.0
    #: ticks missed (the gateway was down) are fired late only within this window
    catchup_window_s: float = 300.0
    #: accept a sixth (seconds) cron field: development and tests only, CronJobs have none
    allow_seconds_field: bool = False
    #: how often job runners and queue workers look for work written by other processes
    poll_interval_s: float = 1.0
    #: asynchronous invocations run at once by one gateway process
    queue_concurrency: int = 16
    #: attempts of an asynchronous invocation before it is dead-lettered
    max_attempts: int = 5
    #: retry backoff: ``retry_base_s * 2**(attempt-1)``, at most ``retry_max_s``
    retry_base_s: float = 1.0
    retry_max_s: float = 300.0
    #: the largest result (response body) stored for a job or an asynchronous invocation
    max_result_bytes: int = 64 * 1024
    #: how long past the function's timeout (a cron tick: past the tick) an asynchronous
    #: call or a tick stays leased to the process that took it; when it runs out (that
    #: process stopped), another takes it over: run if it never started, else recorded
    #: ``interrupted``
    lease_margin_s: float = Field(default=30.0, gt=0)


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
    #: seconds a build may run
    build_timeout_s: int = 900
    #: Secret in builds_namespace with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY for kaniko's
    #: S3 build context (only there: tenant namespaces never see it)
    build_s3_secret: str = "sless-build-s3"  # noqa: S105 - a Secret name
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


#: short environment names the documentation promises, as ``alias: (group, field)``; the
#: long name ``SLESS_<GROUP>_<FIELD>`` keeps working and wins when both are set
ENV_ALIASES: dict[str, tuple[str, str]] = {
    "SLESS_AUTO_ONBOARD": ("auth", "auto_onboard"),
    "SLESS_ALLOW_NO_SANDBOX": ("kubernetes", "allow_no_sandbox"),
}


class _EnvAliases(PydanticBaseSettingsSource):
    """``ENV_ALIASES`` read from the environment, below every other source in priority.

    pydantic-settings merges sources deeply, higher priority first, so a value given by the
    long name (or to the constructor) is never replaced by its alias.
    """

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the aliases itself

    def __call__(self) -> dict[str, Any]:
        environ = {key.upper(): value for key, value in os.environ.items()}
        found: dict[str, Any] = {}
        for alias, (group, name) in ENV_ALIASES.items():
            if alias in environ:
                found.setdefault(group, {})[name] = environ[alias]
        return found


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SLESS_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            dotenv_settings,
            file_secret_settings,
            _EnvAliases(settings_cls),
        )

    #: ``development`` allows the conveniences refused in ``production``
    environment: Literal["development", "production"] = "development"
    backend: Literal["local", "kubernetes"] = "local"
    data_dir: Path = Field(default_factory=default_data_dir)
    database: DatabaseSettings = Field(default_factory=DatabaseSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    secrets: SecretsSettings = Field(default_factory=SecretsSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    s3: S3Settings = Field(default_factory=S3Settings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    build: BuildSettings = Field(default_factory=BuildSettings)
    events: EventsSettings = Field(default_factory=EventsSettings)
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)

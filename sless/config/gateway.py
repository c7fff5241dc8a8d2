"""The gateway's HTTP server and the per-tenant limits and quotas it applies."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator


class GatewaySettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 8080
    #: largest request body accepted by ``/fn/...`` (413 above it)
    max_invoke_body_bytes: int = 6 * 1024 * 1024
    #: largest response body a function may answer (a larger one fails the call with 502
    #: "response larger than ..."), in every mode and for every kind of call
    max_response_bytes: int = Field(default=32 * 1024 * 1024, ge=1024, le=1024 * 1024 * 1024)
    #: a streamed answer (sless.gateway.invoking) that sends nothing for this long fails
    #: the call as a timeout and its worker is stopped; the function's own timeout still
    #: bounds the whole stream (``SLESS_GATEWAY_STREAM_IDLE_TIMEOUT_S``)
    stream_idle_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    #: every call of ``/fn/...`` starts or continues a W3C trace whose context reaches the
    #: function (sless.backends.tracing); spans are exported only with
    #: ``SLESS_OTEL_EXPORTER_OTLP_ENDPOINT``
    tracing: bool = True
    #: largest zip accepted by the upload endpoint (413 above it)
    max_upload_bytes: int = 50 * 1024 * 1024
    #: how long a clean shutdown waits for in-flight invocations
    shutdown_grace_s: float = 10.0
    #: public URL of the gateway, shown to users (defaults to http://host:port)
    public_url: str | None = None
    #: the HTTP/1.1 server of ``sless up``: ``express``, uvicorn's httptools (llhttp, C)
    #: with the gateway's own protocol, which serves warm whole ``/fn/`` calls without the
    #: ASGI hand-over (sless.gateway.front); granian (hyper, Rust; its I/O runs in a
    #: thread of its own); or uvicorn with httptools or h11 (pure Python) and ASGI for
    #: everything. All pass the request-smuggling tests; docs/PERFORMANCE.md has the
    #: figures that chose the default
    http: Literal["express", "granian", "httptools", "h11"] = "express"
    # -- slow and greedy clients (nginx's client_header_timeout, client_body_timeout,
    # limit_conn; sless.gateway.connections, docs/SECURITY.md "Connection limits")
    #: a connection must deliver a whole request head (request line and headers) within
    #: this long of being opened or of its previous response; else it is closed
    header_timeout_s: float = Field(default=10.0, gt=0, le=300)
    #: a request body must arrive within this long of its headers, plus one second per
    #: ``body_min_rate_bytes_per_s`` received; else 408 and the connection is closed
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    body_min_rate_bytes_per_s: int = Field(default=64 * 1024, ge=1)
    #: connections open at once; beyond it new connections wait in the listen queue
    #: (granian) or are answered 503 (uvicorn), the accepted ones keep being served
    max_connections: int = Field(default=4096, ge=16)
    #: connections one client address may hold (a client behind a trusted proxy: requests
    #: in flight per X-Forwarded-For client); the newest beyond it are closed (503)
    max_connections_per_client: int = Field(default=128, ge=1)
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


class LimitsSettings(BaseModel):
    """Per-tenant limits and quotas: ``SLESS_LIMITS_<FIELD>``.

    Rates and concurrency are kept in memory by each gateway process: with N gateway
    replicas a tenant gets up to N times these numbers. The quotas (``max_*``) are counted
    from the stored functions under a per-tenant PostgreSQL lock, so they hold across
    replicas. The provider may set any ``max_*`` per tenant (``PUT
    /v1/admin/tenants/{tenant}/limits``, or the Tenant resource's ``spec.limits`` in
    Kubernetes mode): these are the defaults of every tenant without one.
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
    #: triggers one tenant may have, of every type (http, cron, rabbitmq)
    max_triggers: int = Field(default=100, ge=0)
    #: jobs one tenant may have (each keeps one definition and its last run)
    max_jobs: int = Field(default=100, ge=0)
    #: secrets one tenant may have, and the sum of the sizes of their values
    max_secrets: int = Field(default=100, ge=0)
    max_secret_bytes: int = Field(default=256 * 1024, ge=0)
    #: API tokens a tenant may hold at once (not revoked); minted by the provider
    max_tokens: int = Field(default=20, ge=0)
    #: asynchronous calls of one tenant queued or running at once
    max_queued_calls: int = Field(default=10_000, ge=0)
    #: bytes of function logs one tenant keeps on disk (embedded mode; the oldest lines
    #: are dropped past it, see docs/SECURITY.md)
    max_log_bytes: int = Field(default=64 * 1024 * 1024, ge=64 * 1024)


class OtelSettings(BaseModel):
    """OpenTelemetry export of the gateway's spans (``SLESS_OTEL_*``)."""

    #: an OTLP/HTTP collector, e.g. ``http://127.0.0.1:4318`` (spans go to ``/v1/traces``);
    #: None: no spans are made (the trace context still reaches the functions)
    exporter_otlp_endpoint: str | None = None
    #: ``service.name`` of the spans
    service_name: str = "sless-gateway"

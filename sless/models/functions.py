"""The function: its spec (runtime, resources, egress, callbacks, secrets, traffic split
between versions), its status, and its immutable versions.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from sless.models.interfaces import (
    Interface,
    check_interface,
    default_entrypoint,
    interface_env,
)
from sless.models.names import Name, VersionName, check_env_name, is_dns1123_label


class Runtime(StrEnum):
    PYTHON311 = "python3.11"
    NODEJS20 = "nodejs20"

    @property
    def handler_file(self) -> str:
        return "handler.py" if self is Runtime.PYTHON311 else "handler.js"


class Phase(StrEnum):
    PENDING = "Pending"
    VALIDATING = "Validating"
    REJECTED = "Rejected"
    BUILDING = "Building"
    READY = "Ready"
    FAILED = "Failed"


class AuthMode(StrEnum):
    PUBLIC = "public"
    TOKEN = "token"  # noqa: S105 - a mode name, not a secret


def _check_egress(rule: str) -> str:
    """``host:port`` or ``CIDR:port``; the port is required (no "any port" egress)."""
    host, sep, port = rule.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"egress rule {rule!r} must be host:port or CIDR:port")
    host = host.strip("[]")
    if "/" in host or host.replace(".", "").isdigit() or ":" in host:
        try:
            ipaddress.ip_network(host, strict=False)
        except ValueError as e:
            raise ValueError(f"egress rule {rule!r}: {e}") from None
    elif not all(is_dns1123_label(part) for part in host.lower().split(".")):
        raise ValueError(f"egress rule {rule!r}: invalid host name")
    return rule


#: bound on a callback URL's length (browsers and proxies commonly stop near 2 KiB)
MAX_CALLBACK_URL_LENGTH = 2048


def check_callback_url(url: str) -> str:
    """An absolute ``http``/``https`` URL with a host, without credentials or fragment.

    Only the syntax is checked here; where it may point is decided when a callback is sent
    (the function's egress allowlist and the egress proxy's address rules).
    """
    if len(url) > MAX_CALLBACK_URL_LENGTH:
        raise ValueError(f"callback_url is longer than {MAX_CALLBACK_URL_LENGTH} characters")
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in url):
        raise ValueError("callback_url may not contain spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("callback_url must be an http:// or https:// URL")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        # credentials in a URL end up in logs and proxies: sign with callback_secret instead
        raise ValueError("callback_url may not carry credentials (user:password@)")
    if not parts.hostname:
        raise ValueError("callback_url needs a host")
    try:
        parts.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError:
        raise ValueError("callback_url has an invalid port") from None
    if parts.fragment or url.endswith("#"):
        raise ValueError("callback_url may not have a fragment")
    return url


class CodeRef(BaseModel):
    """Set by an upload: which code the function runs, and which version that makes."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    blob_key: str = Field(min_length=1, max_length=1024)
    size: int = Field(default=0, ge=0)
    #: the immutable version this code and the spec around it are (``v1``, ``v2``, ...);
    #: None for code stored before versions existed
    version: VersionName | None = None


#: how many versions one function's traffic may be split between
MAX_TRAFFIC_TARGETS = 4


class TrafficTarget(BaseModel):
    """A share of the function's calls that go to one version (Knative's traffic block).

    ``percent`` may be 0: the version is not called by the split, but it stays deployed and
    reachable directly as ``/fn/{ns}/{name}@{version}`` (a canary before it gets traffic).
    """

    model_config = ConfigDict(extra="forbid")

    version: VersionName
    percent: int = Field(ge=0, le=100)


#: how many secrets one function may name
MAX_FUNCTION_SECRETS = 16


class SecretRef(BaseModel):
    """A secret of the function's own namespace, given to the function as ``env``.

    Only a name: a secret of another namespace cannot be expressed (the namespace is always
    the function's own), and the value never enters a spec, a CR or a status.
    """

    model_config = ConfigDict(extra="forbid")

    name: Name
    env: Annotated[str, AfterValidator(check_env_name)]


class FunctionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    runtime: Runtime = Runtime.PYTHON311
    #: the contract the handler is written to (sless.models.interfaces); ``sless`` is ours
    interface: Interface = Interface.SLESS
    #: ``lambda`` only: the API Gateway event shape, HTTP API ``2.0`` (when unset) or REST
    #: proxy ``1.0``
    payload_format_version: Literal["1.0", "2.0"] | None = None
    #: when unset: the default of the interface (``handler.handle`` for ``sless``)
    entrypoint: str = "handler.handle"
    env: dict[str, str] = Field(default_factory=dict)
    memory_mb: int = Field(default=128, ge=32, le=4096)
    cpu_millis: int = Field(default=500, ge=50, le=4000)
    timeout_s: float = Field(default=30.0, gt=0, le=900)
    #: calls one instance (worker or pod) serves at once: the autoscaler's target
    concurrency: int = Field(default=4, ge=1, le=1000)
    min_instances: int = Field(default=0, ge=0, le=10)
    #: instances the function may scale to (at most the tenant's ``max_instances`` quota);
    #: calls beyond ``max_instances * concurrency`` queue for a bounded time, then 429
    max_instances: int = Field(default=4, ge=1, le=100)
    egress: list[Annotated[str, AfterValidator(_check_egress)]] = Field(
        default_factory=list, max_length=32
    )
    auth: AuthMode = AuthMode.PUBLIC
    #: ``/fn/...`` accepts a WebSocket upgrade (docs/websockets.md); else it is refused
    websocket: bool = False
    #: POSTed a JSON document when an asynchronous invocation ends (sless.events.callbacks)
    callback_url: (
        Annotated[
            str,
            Field(max_length=MAX_CALLBACK_URL_LENGTH),
            AfterValidator(check_callback_url),
        ]
        | None
    ) = None
    #: the name of a secret of the namespace whose value signs callbacks (HMAC-SHA256)
    callback_secret: Name | None = None
    #: secrets of the namespace given to the function as environment variables
    secrets: list[SecretRef] = Field(default_factory=list, max_length=MAX_FUNCTION_SECRETS)
    #: how calls are split between versions; empty: every call goes to the current version
    #: (``code.version``). The percents add up to 100.
    traffic: list[TrafficTarget] = Field(default_factory=list, max_length=MAX_TRAFFIC_TARGETS)
    code: CodeRef | None = None

    @field_validator("entrypoint")
    @classmethod
    def _entrypoint(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+", value):
            raise ValueError("must look like module.function, e.g. handler.handle")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 64:
            raise ValueError("at most 64 environment variables")
        for key, item in value.items():
            check_env_name(key)
            if len(item) > 4096:
                raise ValueError(f"environment variable {key!r} is longer than 4096 bytes")
        return value

    @model_validator(mode="after")
    def _interface(self) -> FunctionSpec:
        check_interface(self.runtime.value, self.interface, self.payload_format_version)
        if "entrypoint" not in self.model_fields_set:
            # the peer's own default, kept in the spec so that it reads what runs
            self.entrypoint = default_entrypoint(self.runtime.value, self.interface)
        return self

    def interface_env(self) -> dict[str, str]:
        """The SLESS_* variables that tell the runtime server its adapter."""
        return interface_env(self.interface, self.payload_format_version, self.memory_mb)

    @model_validator(mode="after")
    def _instances(self) -> FunctionSpec:
        if self.min_instances > self.max_instances:
            raise ValueError(
                f"min_instances ({self.min_instances}) may not exceed max_instances "
                f"({self.max_instances})"
            )
        return self

    @model_validator(mode="after")
    def _secrets(self) -> FunctionSpec:
        names = [ref.name for ref in self.secrets]
        if len(set(names)) != len(names):
            raise ValueError("secrets: each secret may be named once")
        envs = [ref.env for ref in self.secrets]
        if len(set(envs)) != len(envs):
            raise ValueError("secrets: two secrets set the same environment variable")
        clash = sorted(set(envs) & set(self.env))
        if clash:
            raise ValueError(f"secrets: {clash[0]!r} is set by env as well")
        return self

    @model_validator(mode="after")
    def _traffic(self) -> FunctionSpec:
        if not self.traffic:
            return self
        versions = [target.version for target in self.traffic]
        if len(set(versions)) != len(versions):
            raise ValueError("traffic: each version may be named once")
        total = sum(target.percent for target in self.traffic)
        if total != 100:
            raise ValueError(f"traffic: the percents add up to {total}, not 100")
        return self

    def secret_names(self) -> list[str]:
        return [ref.name for ref in self.secrets]

    @property
    def version(self) -> str | None:
        """The current version: what the code (and this spec) make; None before an upload."""
        return self.code.version if self.code is not None else None

    def runnable(self) -> FunctionSpec:
        """What a version keeps of the spec: everything but the traffic split."""
        return self.model_copy(update={"traffic": []})

    def routed_versions(self) -> list[str]:
        """The versions calls can reach: the current one, then the traffic targets."""
        out = [self.version] if self.version is not None else []
        out += [target.version for target in self.traffic if target.version not in out]
        return out


class FunctionResourceSpec(FunctionSpec):
    """``spec`` of a Function resource: the ``FunctionSpec``, and the specs of the versions
    its traffic split names besides the current one (written by the gateway from the
    versions table, so that the operator can render each version's Deployment)."""

    revisions: dict[str, FunctionSpec] = Field(default_factory=dict)

    def function_spec(self) -> FunctionSpec:
        return FunctionSpec.model_validate(self.model_dump(mode="json", exclude={"revisions"}))


class FunctionStatus(BaseModel):
    phase: Phase = Phase.PENDING
    message: str = ""
    validation: dict[str, Any] | None = None
    observed_sha256: str | None = None
    #: the version that serves (the current version of the serving spec)
    version: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class VersionState(StrEnum):
    #: may serve (validation allowed it, or the provider approved it)
    ALLOWED = "allowed"
    #: waits for the provider's review; cannot serve until approved
    HELD = "held"
    #: refused by the provider's review; kept in the history, never served
    REJECTED = "rejected"


class FunctionVersion(BaseModel):
    """One immutable version of a function: its code, the spec it runs with (no traffic
    split), the validation report of its code, who made it and when."""

    version: str
    sha256: str
    spec: FunctionSpec
    validation: dict[str, Any] | None = None
    state: VersionState = VersionState.ALLOWED
    created_by: str = ""
    created_at: datetime | None = None


class Function(BaseModel):
    name: str
    namespace: str
    spec: FunctionSpec
    status: FunctionStatus
    #: changes on every write (embedded: a database sequence; Kubernetes: the resource's
    #: metadata.resourceVersion); sent as the ETag, checked by If-Match
    resource_version: str | None = None

"""What only the custom resources carry (Kubernetes mode): the operator's conditions, the
Function's status, and the Tenant resource.

The operator writes these into ``status`` (as it does ``TriggerStatus`` and
``FunctionJobStatus``); the CRD schemas in deploy/crds/ are generated from them
(sless/crds.py). Field names follow the contract the gateway reads.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sless.models.functions import FunctionSpec, Phase


class Condition(BaseModel):
    """A Kubernetes-style condition (``type`` is e.g. ``Built``, ``Ready``)."""

    type: str
    status: Literal["True", "False", "Unknown"]
    reason: str = ""
    message: str = ""
    lastTransitionTime: datetime | None = None


class FunctionCRStatus(BaseModel):
    """``status`` of a Function resource.

    The gateway writes ``validation`` and ``phase`` (Validating/Pending) on upload, and
    ``allowedVersions`` (the versions the code gate lets serve, ``sless.store.CodeGate``)
    before every spec it writes and with every review decision; the operator owns the
    rest. The operator builds and deploys only versions in ``allowedVersions``. ``builds``
        maps each code sha256 ever built for this function to its pinned image
    (``registry/ns-name@sha256:...``): a sha256 in it is never built again.
    """

    phase: Phase | None = None
    message: str = ""
    validation: dict[str, Any] | None = None
    #: the function's versions that may serve (allowed or approved), written by the gateway
    allowedVersions: list[str] | None = None
    observed_sha256: str | None = None
    image: str | None = None
    servingSpec: FunctionSpec | None = None
    #: the specs of the traffic split's other versions whose Deployments are applied
    servingRevisions: dict[str, FunctionSpec] = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)
    builds: dict[str, str] = Field(default_factory=dict)
    updated_at: datetime | None = None


class TenantLimits(BaseModel):
    """Quotas the provider sets for one tenant; unset: the platform's ``SLESS_LIMITS_*``.

    The names are those of ``LimitsSettings``; the gateway refuses a write past any of
    them with 403 ``quota_exceeded`` (sless/tenancy/quotas.py).
    """

    model_config = ConfigDict(extra="forbid")

    max_functions: int | None = Field(default=None, ge=0)
    max_memory_mb: int | None = Field(default=None, ge=0)
    max_code_bytes: int | None = Field(default=None, ge=0)
    max_instances: int | None = Field(default=None, ge=1)
    max_versions: int | None = Field(default=None, ge=1, le=1000)
    max_triggers: int | None = Field(default=None, ge=0)
    max_jobs: int | None = Field(default=None, ge=0)
    max_secrets: int | None = Field(default=None, ge=0)
    max_secret_bytes: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_queued_calls: int | None = Field(default=None, ge=0)
    max_log_bytes: int | None = Field(default=None, ge=64 * 1024)

    def overrides(self) -> dict[str, int]:
        """The limits set here (the others follow the platform's settings)."""
        return {k: v for k, v in self.model_dump().items() if v is not None}


class TenantSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: a plan of ``settings.kubernetes.plans``; unset = the default plan
    plan: str | None = Field(default=None, max_length=63)
    #: this tenant's own quotas (the gateway reads them from here in Kubernetes mode)
    limits: TenantLimits | None = None


class TenantStatus(BaseModel):
    phase: Literal["Ready", "Failed"] | None = None
    message: str = ""
    namespace: str | None = None
    plan: str | None = None
    updated_at: datetime | None = None

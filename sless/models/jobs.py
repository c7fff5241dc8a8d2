"""Function jobs: one run per new ``run_id``, and the status of the last run."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sless.models.names import Name


class JobSpec(BaseModel):
    """A job runs ``function`` once per new ``run_id`` (0: never; the same id never twice)."""

    model_config = ConfigDict(extra="forbid")

    function: Name
    run_id: int = Field(default=0, ge=0)
    payload: Any = None


class JobPhase(StrEnum):
    IDLE = "Idle"
    #: a new run_id is accepted and waits for a runner (embedded mode)
    PENDING = "Pending"
    WAITING = "Waiting"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class FunctionJobStatus(BaseModel):
    """``status`` of a FunctionJob: ``run_id`` is the last run started (never started twice)."""

    phase: JobPhase | None = None
    message: str = ""
    run_id: int | None = None
    job_name: str | None = None
    result: str | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    #: embedded mode: the invocation of the last run (``GET .../invocations/{id}``)
    invocation_id: str | None = None
    #: why the last run failed (a short message; never a payload)
    error: str | None = None


class FunctionJob(BaseModel):
    name: str
    namespace: str
    spec: JobSpec
    status: FunctionJobStatus
    #: changes on every write (embedded: a database sequence; Kubernetes: the resource's
    #: metadata.resourceVersion); sent as the ETag, checked by If-Match
    resource_version: str | None = None

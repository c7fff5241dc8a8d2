"""Function custom resources to and from the platform's models. No I/O.

The contract with the operator: ``metadata.name`` is the function's name, the namespace
is the tenant's; ``spec`` is ``FunctionSpec.model_dump(mode="json")``; ``status`` holds
``phase``, ``message``, ``validation``, ``observed_sha256``, ``image``, ``servingSpec``
(the spec that serves, same shape as ``spec``), ``conditions`` and ``updated_at``. The
gateway writes ``spec`` and, on upload, ``status.phase``/``validation``/``message``; the
operator owns the rest of the status.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from sless.errors import Invalid
from sless.models import (
    Function,
    FunctionJob,
    FunctionJobStatus,
    FunctionResourceSpec,
    FunctionSpec,
    FunctionStatus,
    JobSpec,
    Phase,
    Trigger,
    TriggerSpec,
    TriggerStatus,
    namespace_for,
)

log = logging.getLogger(__name__)
_S = TypeVar("_S", bound=BaseModel)

KIND = "Function"
PLURAL = "functions"
#: the Service (and so the EndpointSlices) the operator creates for function ``name``
SERVICE_PREFIX = "fn-"


def service_name(function: str) -> str:
    return SERVICE_PREFIX + function


def function_of_service(service: str) -> str | None:
    return service[len(SERVICE_PREFIX) :] if service.startswith(SERVICE_PREFIX) else None


def resource_spec(spec: FunctionSpec, revisions: dict[str, FunctionSpec]) -> dict[str, Any]:
    """A Function's ``spec``: the function's, and the specs of its other routed versions."""
    body = spec.model_dump(mode="json")
    body["revisions"] = {v: r.model_dump(mode="json") for v, r in revisions.items()}
    return body


def new_body(
    api_version: str,
    namespace: str,
    name: str,
    spec: FunctionSpec,
    revisions: dict[str, FunctionSpec] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": KIND,
        "metadata": {"name": name, "namespace": namespace},
        "spec": resource_spec(spec, revisions or {}),
    }


def is_terminating(body: dict[str, Any]) -> bool:
    """Deleted, and waiting for the operator's finalizer: gone as far as tenants see."""
    return bool((body.get("metadata") or {}).get("deletionTimestamp"))


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _phase(value: Any) -> Phase:
    try:
        return Phase(value)
    except ValueError:
        return Phase.PENDING


def _resource_version(metadata: dict[str, Any]) -> str | None:
    value = metadata.get("resourceVersion")
    return str(value) if value else None


def function_from_body(body: dict[str, Any]) -> Function:
    """The API's view of a Function resource; ``Invalid`` when its spec does not parse."""
    metadata = body.get("metadata") or {}
    name = str(metadata.get("name", ""))
    try:
        spec = FunctionResourceSpec.model_validate(body.get("spec") or {}).function_spec()
    except ValidationError as e:
        # written around the gateway (kubectl): say which fields, not their values
        fields = sorted({".".join(str(p) for p in err["loc"]) for err in e.errors()})
        raise Invalid(f"function {name!r} has an invalid spec in the cluster: {fields}") from None
    status = body.get("status") or {}
    validation = status.get("validation")
    return Function(
        name=name,
        namespace=str(metadata.get("namespace", "")),
        resource_version=_resource_version(metadata),
        spec=spec,
        status=FunctionStatus(
            phase=_phase(status.get("phase")),
            message=str(status.get("message") or ""),
            validation=validation if isinstance(validation, dict) else None,
            observed_sha256=status.get("observed_sha256") or None,
            version=_serving_version(status),
            created_at=_timestamp(metadata.get("creationTimestamp")),
            updated_at=_timestamp(status.get("updated_at")),
        ),
    )


def _serving_version(status: dict[str, Any]) -> str | None:
    serving = status.get("servingSpec")
    code = serving.get("code") if isinstance(serving, dict) else None
    version = code.get("version") if isinstance(code, dict) else None
    return version if isinstance(version, str) else None


@dataclass(frozen=True)
class Serving:
    """What the invoke path needs to know of one function, parsed once per change."""

    phase: str
    spec: FunctionSpec | None
    terminating: bool
    #: the other versions its traffic split names whose Deployments are applied
    revisions: dict[str, FunctionSpec] = field(default_factory=dict)


def serving_of(body: dict[str, Any]) -> Serving:
    status = body.get("status") or {}
    raw = status.get("servingSpec")
    spec = None
    revisions: dict[str, FunctionSpec] = {}
    try:
        if isinstance(raw, dict):
            spec = FunctionSpec.model_validate(raw)
        for version, revision in (status.get("servingRevisions") or {}).items():
            if spec is not None and version in spec.routed_versions():
                revisions[version] = FunctionSpec.model_validate(revision)
    except (ValidationError, AttributeError):
        metadata = body.get("metadata") or {}
        log.warning(
            "function %s/%s has an invalid status.servingSpec; not serving it",
            metadata.get("namespace"),
            metadata.get("name"),
        )
        spec, revisions = None, {}
    return Serving(
        phase=str(status.get("phase") or Phase.PENDING.value),
        spec=spec,
        terminating=is_terminating(body),
        revisions=revisions,
    )


# -- triggers and jobs -------------------------------------------------------------------------

TRIGGERS = "triggers"
FUNCTION_JOBS = "functionjobs"


def _status_of(model: type[_S], body: dict[str, Any]) -> _S:
    """The status as the model reads it; a status it cannot read counts as none yet."""
    try:
        return model.model_validate(body.get("status") or {})
    except ValidationError:
        return model()


def trigger_from_body(body: dict[str, Any]) -> Trigger:
    metadata = body.get("metadata") or {}
    name = str(metadata.get("name", ""))
    try:
        spec = TriggerSpec.model_validate(body.get("spec") or {})
    except ValidationError as e:
        fields = sorted({".".join(str(p) for p in err["loc"]) for err in e.errors()})
        raise Invalid(f"trigger {name!r} has an invalid spec in the cluster: {fields}") from None
    return Trigger(
        name=name,
        namespace=str(metadata.get("namespace", "")),
        resource_version=_resource_version(metadata),
        spec=spec,
        status=_status_of(TriggerStatus, body),
    )


def job_from_body(body: dict[str, Any]) -> FunctionJob:
    metadata = body.get("metadata") or {}
    name = str(metadata.get("name", ""))
    try:
        spec = JobSpec.model_validate(body.get("spec") or {})
    except ValidationError as e:
        fields = sorted({".".join(str(p) for p in err["loc"]) for err in e.errors()})
        raise Invalid(f"job {name!r} has an invalid spec in the cluster: {fields}") from None
    return FunctionJob(
        name=name,
        namespace=str(metadata.get("namespace", "")),
        resource_version=_resource_version(metadata),
        spec=spec,
        status=_status_of(FunctionJobStatus, body),
    )


#: the label an EndpointSlice names its Service by
_SERVICE_LABEL = "kubernetes.io/service-name"


def key_of(item: dict[str, Any]) -> tuple[str, str]:
    metadata = item.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


def is_function_slice(item: dict[str, Any]) -> bool:
    metadata = item.get("metadata") or {}
    service = str((metadata.get("labels") or {}).get(_SERVICE_LABEL, ""))
    return str(metadata.get("namespace", "")).startswith(namespace_for("")) and (
        function_of_service(service) is not None
    )

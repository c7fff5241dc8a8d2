"""The one schema source: function, trigger and job specs and their statuses.

The same models validate the HTTP API bodies, the database rows and (in Kubernetes mode)
the custom resources, whose OpenAPI schemas are generated from these classes. Nothing here
does I/O.

One module per kind of object: ``names`` (the naming rules all of them share),
``functions``, ``triggers``, ``jobs``, ``reach`` (where tenant egress may never go), and
``resources`` (what only the custom resources
carry). Import them from here.
"""

from __future__ import annotations

from sless.models.admission import HELD_MESSAGE, Refusal, may_serve, refusals, wanted_versions
from sless.models.functions import (
    MAX_CALLBACK_URL_LENGTH,
    MAX_FUNCTION_SECRETS,
    MAX_TRAFFIC_TARGETS,
    AuthMode,
    CodeRef,
    Function,
    FunctionResourceSpec,
    FunctionSpec,
    FunctionStatus,
    FunctionVersion,
    Phase,
    Runtime,
    SecretRef,
    TrafficTarget,
    VersionState,
    check_callback_url,
)
from sless.models.interfaces import Interface
from sless.models.jobs import FunctionJob, FunctionJobStatus, JobPhase, JobSpec
from sless.models.names import (
    MAX_NAME_LENGTH,
    MAX_TENANT_NAME_LENGTH,
    Name,
    TenantName,
    VersionName,
    check_env_name,
    check_name,
    check_tenant_name,
    check_version_name,
    is_dns1123_label,
    is_version_name,
    namespace_for,
    tenant_of,
    version_number,
)
from sless.models.reach import PRIVATE_SETTING, EgressReach, IPAddress, IPNetwork
from sless.models.resources import (
    Condition,
    FunctionCRStatus,
    TenantLimits,
    TenantSpec,
    TenantStatus,
)
from sless.models.triggers import AmqpName, RabbitMQSource, Trigger, TriggerSpec, TriggerStatus

__all__ = [
    "HELD_MESSAGE",
    "MAX_CALLBACK_URL_LENGTH",
    "MAX_FUNCTION_SECRETS",
    "MAX_NAME_LENGTH",
    "MAX_TENANT_NAME_LENGTH",
    "MAX_TRAFFIC_TARGETS",
    "PRIVATE_SETTING",
    "AmqpName",
    "AuthMode",
    "CodeRef",
    "Condition",
    "EgressReach",
    "Function",
    "FunctionCRStatus",
    "FunctionJob",
    "FunctionJobStatus",
    "FunctionResourceSpec",
    "FunctionSpec",
    "FunctionStatus",
    "FunctionVersion",
    "IPAddress",
    "IPNetwork",
    "Interface",
    "JobPhase",
    "JobSpec",
    "Name",
    "Phase",
    "RabbitMQSource",
    "Refusal",
    "Runtime",
    "SecretRef",
    "TenantLimits",
    "TenantName",
    "TenantSpec",
    "TenantStatus",
    "TrafficTarget",
    "Trigger",
    "TriggerSpec",
    "TriggerStatus",
    "VersionName",
    "VersionState",
    "check_callback_url",
    "check_env_name",
    "check_name",
    "check_tenant_name",
    "check_version_name",
    "is_dns1123_label",
    "is_version_name",
    "may_serve",
    "namespace_for",
    "refusals",
    "tenant_of",
    "version_number",
    "wanted_versions",
]

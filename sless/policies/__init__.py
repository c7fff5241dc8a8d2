"""Pure functions that render (and check) the Kubernetes objects of sless.

No I/O and no Kubernetes client: every object is a plain dict, a pure function of its
inputs and the settings, unit-tested field by field and applied by the operator. Each
hardening rule is an allowlist checker returning every ``Violation`` with its field path.
"""

from sless.policies import labels
from sless.policies.building import (
    build_job,
    check_build_job,
    context_key,
    dockerfile,
    image_repository,
)
from sless.policies.namespaces import (
    GATEWAY_ROLE_BINDING,
    GATEWAY_TENANT_ROLE,
    builds_namespace,
    check_role_binding,
    check_tenant_namespace,
    function_service_account,
    gateway_role_binding,
    limit_range,
    plan_for,
    pod_security_labels,
    resource_quota,
    tenant_namespace,
    tenant_objects,
)
from sless.policies.networking import (
    METADATA_CIDRS,
    EgressRefused,
    allow_dns,
    allow_gateway_ingress,
    allow_invoker_egress,
    builds_network_policies,
    default_deny,
    function_egress_policy,
    parse_egress,
    tenant_network_policies,
)
from sless.policies.pods import (
    check_pod_spec,
    function_pod_spec,
    invoker_pod_spec,
    restricted_security_context,
    sandbox_runtime_class,
)
from sless.policies.runtimeclass import runtime_class
from sless.policies.violations import PolicyViolation, Violation
from sless.policies.workloads import (
    cron_job,
    function_deployment,
    function_job,
    function_service,
    invoke_url,
    is_idle,
    last_activity,
    replicas_for,
)

__all__ = [
    "GATEWAY_ROLE_BINDING",
    "GATEWAY_TENANT_ROLE",
    "METADATA_CIDRS",
    "EgressRefused",
    "PolicyViolation",
    "Violation",
    "allow_dns",
    "allow_gateway_ingress",
    "allow_invoker_egress",
    "build_job",
    "builds_namespace",
    "builds_network_policies",
    "check_build_job",
    "check_pod_spec",
    "check_role_binding",
    "check_tenant_namespace",
    "context_key",
    "cron_job",
    "default_deny",
    "dockerfile",
    "function_deployment",
    "function_egress_policy",
    "function_job",
    "function_pod_spec",
    "function_service",
    "function_service_account",
    "gateway_role_binding",
    "image_repository",
    "invoke_url",
    "invoker_pod_spec",
    "is_idle",
    "labels",
    "last_activity",
    "limit_range",
    "parse_egress",
    "plan_for",
    "pod_security_labels",
    "replicas_for",
    "resource_quota",
    "restricted_security_context",
    "runtime_class",
    "sandbox_runtime_class",
    "tenant_namespace",
    "tenant_network_policies",
    "tenant_objects",
]

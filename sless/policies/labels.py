"""Names and labels of every object sless creates in Kubernetes.

One place, because the operator creates with them, NetworkPolicies select with them and
the gateway finds Services with them: a label spelled twice drifts.
"""

from __future__ import annotations

import hashlib

DOMAIN = "sless.kube5s.ru"
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "sless"
FUNCTION = f"{DOMAIN}/function"
#: the tenant namespace of an object that lives elsewhere (a build Job in sless-builds)
NAMESPACE = f"{DOMAIN}/namespace"
TENANT = f"{DOMAIN}/tenant"
#: function | invoker | build
COMPONENT = f"{DOMAIN}/component"
TRIGGER = f"{DOMAIN}/trigger"
FUNCTION_JOB = f"{DOMAIN}/functionjob"
#: first 63 hex digits of the code's sha256 (a label value holds at most 63 characters)
CODE = f"{DOMAIN}/code"
#: annotations: the full sha256, the run id, the image digest of a build
SHA256_ANNOTATION = f"{DOMAIN}/sha256"
RUN_ID_ANNOTATION = f"{DOMAIN}/run-id"
DIGEST_ANNOTATION = f"{DOMAIN}/digest"
#: on a function's pod template: when each of its secrets was last written (a new value
#: changes it, so the Deployment rolls); never a digest of a value
SECRETS_VERSION_ANNOTATION = f"{DOMAIN}/secrets-version"
#: on a Function: when the gateway last had a call for it (RFC 3339, UTC, whole seconds),
#: written at most every few seconds; the operator scales an idle function to zero from it
LAST_CALL_ANNOTATION = f"{DOMAIN}/last-call"
#: where a function's secrets are mounted, one read-only file per secret (OpenFaaS style)
SECRETS_MOUNT = "/run/secrets"

#: the port every runtime listens on (runtimes/*/server.py: ``PORT``)
FUNCTION_PORT = 8080
FUNCTION_SERVICE_ACCOUNT = "sless-function"
#: Service and Deployment names are ``fn-<name>``: a DNS-1035 label of at most 63
MAX_FUNCTION_NAME_LENGTH = 63 - len("fn-")


def short_hash(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


def managed() -> dict[str, str]:
    return {MANAGED_BY: MANAGER}


def function_object_name(name: str) -> str:
    """Deployment and Service of a function (the gateway resolves EndpointSlices by it)."""
    if len(name) > MAX_FUNCTION_NAME_LENGTH:
        raise ValueError(
            f"function names are limited to {MAX_FUNCTION_NAME_LENGTH} characters in "
            "Kubernetes mode (the Service is fn-<name>)"
        )
    return f"fn-{name}"


#: which of a function's Deployments a pod is from: ``current`` (the Deployment
#: ``fn-<name>``, whatever version it runs) or a version a traffic split names (``v3``)
TRACK = f"{DOMAIN}/track"
CURRENT_TRACK = "current"


def version_object_name(name: str, version: str) -> str:
    """Deployment and Service of one more version of a function (a traffic target): a
    DNS-1035 label of at most 63 characters, unique per (function, version)."""
    full = f"{function_object_name(name)}-{version}"
    if len(full) <= 63:
        return full
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    keep = 63 - len("fn-") - len(version) - len(digest) - 2
    return f"fn-{name[:keep].rstrip('-')}-{digest}-{version}"


def track_selector(name: str, track: str) -> dict[str, str]:
    """Selects the pods of one track of a function (its Service, a version's Deployment)."""
    return {**function_selector(name), TRACK: track}


def function_secret_name(name: str) -> str:
    """The one Secret of a function's pods: its ``secrets``, keyed by secret name."""
    return f"{function_object_name(name)}-secrets"


def function_selector(name: str) -> dict[str, str]:
    """Selects the serving pods of one function (Service, NetworkPolicy, Deployment)."""
    return {FUNCTION: name, COMPONENT: "function"}


def function_labels(name: str) -> dict[str, str]:
    return {**managed(), **function_selector(name)}


def build_labels(namespace: str, name: str, sha256: str) -> dict[str, str]:
    return {
        **managed(),
        COMPONENT: "build",
        FUNCTION: name,
        NAMESPACE: namespace,
        CODE: sha256[:63],
    }


def build_job_name(namespace: str, name: str, sha256: str) -> str:
    """Deterministic per (namespace, function, sha256): creating it twice is a 409."""
    return f"build-{sha256[:12]}-{short_hash(namespace, name, length=10)}"


def cronjob_name(trigger: str) -> str:
    """CronJob names stay within 52 characters (the Job controller appends 11)."""
    name = f"tr-{trigger}"
    if len(name) <= 52:
        return name
    return f"tr-{trigger[:40]}-{short_hash(trigger)}"


def function_job_name(job: str, run_id: int) -> str:
    """Deterministic per (FunctionJob, run_id): the same run id cannot create a second Job."""
    return f"fj-{job[:30].rstrip('-')}-{short_hash(job, length=6)}-{run_id}"

"""Pod templates of function and invoker pods, and the allowlist checker the operator runs
on everything it renders before applying it.

Standards behind each rule (cited again next to the check):
- Pod Security Standards "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards):
  runAsNonRoot, allowPrivilegeEscalation false, capabilities drop ALL (add nothing),
  seccompProfile RuntimeDefault/Localhost, only safe volume types, no host namespaces,
  no hostPath, no hostPort, no privileged.
- CIS Kubernetes Benchmark 5.1.6 (automountServiceAccountToken false), 5.2.x (the same
  restrictions as admission policies), 5.7.2 (seccomp), 5.7.3 (security contexts).
- NSA/CISA Kubernetes Hardening Guide: read-only root filesystem, resource limits,
  a sandboxed runtime (gVisor) for untrusted code.
- Kubernetes advisory on service links (enableServiceLinks: no environment leak of every
  Service of the namespace).

The checker is an allowlist (the fission ``podspec_safety.go`` lesson): a pod field it does
not know is a violation, so a new dangerous field is refused until someone reviews it.
"""

from __future__ import annotations

from typing import Any

from sless.config import KubernetesSettings
from sless.models import FunctionSpec
from sless.policies import labels
from sless.policies.violations import Violation

NOBODY = 65534

_POD_FIELDS = frozenset(
    {
        "containers",
        "initContainers",
        "securityContext",
        "serviceAccountName",
        # the deprecated alias the API server fills in from serviceAccountName
        "serviceAccount",
        "automountServiceAccountToken",
        "enableServiceLinks",
        "runtimeClassName",
        "volumes",
        "restartPolicy",
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "dnsPolicy",
        "affinity",
        "tolerations",
        "nodeSelector",
        "topologySpreadConstraints",
        "priorityClassName",
        "schedulerName",
    }
)
_POD_SECURITY_FIELDS = frozenset(
    {"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "seccompProfile", "supplementalGroups"}
)
_CONTAINER_FIELDS = frozenset(
    {
        "name",
        "image",
        "imagePullPolicy",
        "command",
        "args",
        "workingDir",
        "env",
        "ports",
        "resources",
        "securityContext",
        "volumeMounts",
        "readinessProbe",
        "livenessProbe",
        "startupProbe",
        "terminationMessagePath",
        "terminationMessagePolicy",
    }
)
_CONTAINER_SECURITY_FIELDS = frozenset(
    {
        "allowPrivilegeEscalation",
        "readOnlyRootFilesystem",
        "runAsNonRoot",
        "runAsUser",
        "runAsGroup",
        "privileged",
        "capabilities",
        "seccompProfile",
    }
)
#: PSS restricted allows these volume types; sless needs only emptyDir (and configMap)
_VOLUME_SOURCES = frozenset({"emptyDir", "configMap", "secret"})
_SECCOMP_TYPES = frozenset({"RuntimeDefault", "Localhost"})


def restricted_security_context() -> dict[str, Any]:
    """Container-level context meeting PSS "restricted" and CIS 5.7.3."""
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": NOBODY,
        "runAsGroup": NOBODY,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def restricted_pod_security_context() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": NOBODY,
        "runAsGroup": NOBODY,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def sandbox_runtime_class(settings: KubernetesSettings) -> str | None:
    """The RuntimeClass every function pod names. Empty is refused unless the provider
    explicitly allowed running without a sandbox (then: None, and a warning on every start)."""
    if settings.runtime_class:
        return settings.runtime_class
    if settings.allow_no_sandbox:
        return None
    raise ValueError(
        "kubernetes.runtime_class is empty: function pods would run without a sandbox; "
        "set SLESS_KUBERNETES_RUNTIME_CLASS (gvisor, kata...) or "
        "SLESS_KUBERNETES_ALLOW_NO_SANDBOX=true"
    )


def runtime_env(spec: FunctionSpec, namespace: str, name: str) -> list[dict[str, Any]]:
    """The function's env (the model already refuses SLESS_*, LD_*, PYTHON*, NODE_*), its
    secrets (``secretKeyRef`` into the function's own Secret), then the runtime's own
    variables, which therefore win on a duplicate."""
    env: list[dict[str, Any]] = [
        {"name": key, "value": value} for key, value in sorted(spec.env.items())
    ]
    secret = labels.function_secret_name(name) if spec.secrets else ""
    env += [
        {"name": ref.env, "valueFrom": {"secretKeyRef": {"name": secret, "key": ref.name}}}
        for ref in spec.secrets
    ]
    env += [
        {"name": "PORT", "value": str(labels.FUNCTION_PORT)},
        {"name": "TMPDIR", "value": "/tmp"},  # noqa: S108 - the pod's own size-limited emptyDir
        {"name": "SLESS_CODE_DIR", "value": "/code"},
        {"name": "SLESS_DEPS_DIR", "value": "/deps"},
        {"name": "SLESS_ENTRYPOINT", "value": spec.entrypoint},
        {"name": "SLESS_FUNCTION", "value": name},
        {"name": "SLESS_NAMESPACE", "value": namespace},
        {"name": "SLESS_TIMEOUT_S", "value": f"{spec.timeout_s:g}"},
        {"name": "SLESS_CONCURRENCY", "value": str(spec.concurrency)},
    ]
    env += [{"name": key, "value": value} for key, value in sorted(spec.interface_env().items())]
    return env


def function_resources(spec: FunctionSpec, tmp_mb: int) -> dict[str, Any]:
    """Requests equal limits (Guaranteed QoS for CPU and memory): a tenant gets what the
    spec says and never more."""
    amounts = {
        "cpu": f"{spec.cpu_millis}m",
        "memory": f"{spec.memory_mb}Mi",
        "ephemeral-storage": f"{tmp_mb}Mi",
    }
    return {"requests": dict(amounts), "limits": dict(amounts)}


def function_pod_spec(
    spec: FunctionSpec, namespace: str, name: str, image: str, settings: KubernetesSettings
) -> dict[str, Any]:
    """The pod of one function: gVisor, non-root, read-only root, no token, size-limited
    /tmp, TCP probes on the runtime port (a runtime accepts connections once the handler
    is imported)."""
    port = labels.FUNCTION_PORT
    pod: dict[str, Any] = {
        "serviceAccountName": labels.FUNCTION_SERVICE_ACCOUNT,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": restricted_pod_security_context(),
        "terminationGracePeriodSeconds": min(int(spec.timeout_s) + 5, 905),
        "containers": [
            {
                "name": "function",
                "image": image,
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
                "env": runtime_env(spec, namespace, name),
                "resources": function_resources(spec, settings.function_tmp_mb),
                "securityContext": restricted_security_context(),
                "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],  # noqa: S108
                "startupProbe": {
                    "tcpSocket": {"port": port},
                    "periodSeconds": 1,
                    "failureThreshold": 60,
                },
                "readinessProbe": {
                    "tcpSocket": {"port": port},
                    "periodSeconds": 5,
                    "failureThreshold": 2,
                },
                "livenessProbe": {
                    "tcpSocket": {"port": port},
                    "periodSeconds": 10,
                    "failureThreshold": 3,
                },
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }
        ],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": f"{settings.function_tmp_mb}Mi"}}],
    }
    if spec.secrets:
        # one read-only file per secret under /run/secrets, readable by the function's uid:
        # the kubelet gives the volume's files to the group fsGroup (else root:root 0440,
        # which the function's uid cannot read)
        pod["securityContext"]["fsGroup"] = NOBODY
        pod["volumes"].append(
            {
                "name": "secrets",
                "secret": {
                    "secretName": labels.function_secret_name(name),
                    "defaultMode": 0o440,
                    "items": [{"key": ref.name, "path": ref.name} for ref in spec.secrets],
                },
            }
        )
        pod["containers"][0]["volumeMounts"].append(
            {"name": "secrets", "mountPath": labels.SECRETS_MOUNT, "readOnly": True}
        )
    runtime_class = sandbox_runtime_class(settings)
    if runtime_class:
        pod["runtimeClassName"] = runtime_class
    return pod


def invoker_pod_spec(
    url: str, payload_json: str, timeout_s: float, settings: KubernetesSettings
) -> dict[str, Any]:
    """One HTTP POST to the gateway (cron triggers, FunctionJobs). The response body goes to
    the termination message, where the operator reads a FunctionJob's result. No tenant code
    runs here, but the pod is as locked down as a function's, in the same sandbox (the
    tenant namespace admits only gVisor pods: deploy/admission.yaml)."""
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "serviceAccountName": labels.FUNCTION_SERVICE_ACCOUNT,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": restricted_pod_security_context(),
        "containers": [
            {
                "name": "invoke",
                "image": settings.invoker_image,
                "imagePullPolicy": "IfNotPresent",
                "args": [
                    "--silent",
                    "--show-error",
                    "--fail-with-body",
                    "--max-time",
                    # the gateway may hold the call while it wakes the function from zero
                    f"{timeout_s + settings.activation_timeout_s + 5:g}",
                    "--request",
                    "POST",
                    "--header",
                    "Content-Type: application/json",
                    "--data-binary",
                    payload_json,
                    "--output",
                    "/dev/termination-log",
                    url,
                ],
                "resources": {
                    "requests": {"cpu": "50m", "memory": "32Mi", "ephemeral-storage": "16Mi"},
                    "limits": {"cpu": "100m", "memory": "32Mi", "ephemeral-storage": "16Mi"},
                },
                "securityContext": restricted_security_context(),
                "terminationMessagePath": "/dev/termination-log",
                # no answer at all: curl's own error line (``Could not resolve host``)
                "terminationMessagePolicy": "FallbackToLogsOnError",
            }
        ],
    }
    runtime_class = sandbox_runtime_class(settings)
    if runtime_class:
        pod["runtimeClassName"] = runtime_class
    return pod


def _check_seccomp(path: str, context: dict[str, Any]) -> list[Violation]:
    profile = context.get("seccompProfile")
    if profile is None:
        return []
    if profile.get("type") not in _SECCOMP_TYPES:
        # PSS restricted "Seccomp"; CIS 5.7.2
        return [Violation(f"{path}.seccompProfile.type", "must be RuntimeDefault or Localhost")]
    return []


def _check_container(path: str, container: dict[str, Any], pod_non_root: bool) -> list[Violation]:
    out = [
        Violation(f"{path}.{key}", "field not allowed")
        for key in sorted(set(container) - _CONTAINER_FIELDS)
    ]
    context = container.get("securityContext") or {}
    sc = f"{path}.securityContext"
    out += [
        Violation(f"{sc}.{key}", "field not allowed")
        for key in sorted(set(context) - _CONTAINER_SECURITY_FIELDS)
    ]
    # PSS restricted "Privilege escalation"
    if context.get("allowPrivilegeEscalation") is not False:
        out.append(Violation(f"{sc}.allowPrivilegeEscalation", "must be false"))
    # NSA/CISA hardening guide: immutable container filesystems
    if context.get("readOnlyRootFilesystem") is not True:
        out.append(Violation(f"{sc}.readOnlyRootFilesystem", "must be true"))
    # PSS baseline "Privileged Containers"
    if context.get("privileged"):
        out.append(Violation(f"{sc}.privileged", "must be false"))
    # PSS restricted "Running as Non-root" / "Running as Non-root user"
    if not (
        context.get("runAsNonRoot") is True or (pod_non_root and "runAsNonRoot" not in context)
    ):
        out.append(Violation(f"{sc}.runAsNonRoot", "must be true"))
    if context.get("runAsUser") == 0:
        out.append(Violation(f"{sc}.runAsUser", "must not be 0"))
    # PSS restricted "Capabilities": drop ALL; sless adds none (stricter than NET_BIND_SERVICE)
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        out.append(Violation(f"{sc}.capabilities.drop", "must contain ALL"))
    if capabilities.get("add"):
        out.append(Violation(f"{sc}.capabilities.add", "no capability may be added"))
    out += _check_seccomp(sc, context)
    # PSS baseline "HostPorts"
    for i, port in enumerate(container.get("ports") or []):
        if port.get("hostPort") or port.get("hostIP"):
            out.append(Violation(f"{path}.ports[{i}].hostPort", "host ports are not allowed"))
    # NSA/CISA: limits on every container, or one tenant starves the node
    limits = (container.get("resources") or {}).get("limits") or {}
    for resource in ("cpu", "memory"):
        if resource not in limits:
            out.append(Violation(f"{path}.resources.limits.{resource}", "must be set"))
    return out


def _check_secret_use(
    pod: dict[str, Any], allowed_secret: str | None, volume_names: set[str]
) -> list[Violation]:
    """Secrets reach a container only as ``secretKeyRef`` of ``allowed_secret`` or a
    read-only mount of a volume of it; no other ``valueFrom``/``envFrom`` (a ``fieldRef``
    or ``resourceFieldRef`` is harmless but unused: an allowlist admits what is used)."""
    out = []
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(pod.get(kind) or []):
            path = f"spec.{kind}[{i}]"
            for j, item in enumerate(container.get("env") or []):
                source = item.get("valueFrom")
                if source is None:
                    continue
                ref = source.get("secretKeyRef") or {}
                if set(source) != {"secretKeyRef"} or ref.get("name") != allowed_secret:
                    out.append(
                        Violation(
                            f"{path}.env[{j}].valueFrom",
                            "only a secretKeyRef of the function's own Secret",
                        )
                    )
            for j, mount in enumerate(container.get("volumeMounts") or []):
                if mount.get("name") in volume_names and mount.get("readOnly") is not True:
                    out.append(Violation(f"{path}.volumeMounts[{j}].readOnly", "must be true"))
    return out


def check_pod_spec(
    pod: dict[str, Any],
    *,
    runtime_class: str | None,
    require_digest: bool = False,
    allowed_secret: str | None = None,
) -> list[Violation]:
    """Every violation of the sless pod policy in ``pod`` (a PodSpec as a dict).

    ``runtime_class``: the RuntimeClass the pod must name (None: must name none, only when
    the provider allowed running without a sandbox). ``require_digest``: images must be
    pinned by digest (function pods: what was built is what runs). ``allowed_secret``:
    the one Secret the pod may read (a function's ``fn-<name>-secrets``); None: none.
    """
    out = [Violation(f"spec.{key}", "field not allowed") for key in sorted(set(pod) - _POD_FIELDS)]
    # CIS 5.1.6: no service account token in pods that do not talk to the API
    if pod.get("automountServiceAccountToken") is not False:
        out.append(Violation("spec.automountServiceAccountToken", "must be false"))
    if pod.get("enableServiceLinks") is not False:
        out.append(Violation("spec.enableServiceLinks", "must be false"))
    if "serviceAccount" in pod and pod["serviceAccount"] != pod.get("serviceAccountName"):
        out.append(Violation("spec.serviceAccount", "must equal serviceAccountName"))
    if pod.get("runtimeClassName") != runtime_class:
        out.append(Violation("spec.runtimeClassName", f"must be {runtime_class!r}"))
    context = pod.get("securityContext") or {}
    out += [
        Violation(f"spec.securityContext.{key}", "field not allowed")
        for key in sorted(set(context) - _POD_SECURITY_FIELDS)
    ]
    if context.get("runAsUser") == 0:
        out.append(Violation("spec.securityContext.runAsUser", "must not be 0"))
    # PSS restricted "Seccomp": the pod level sets it, or every container does
    if "seccompProfile" not in context and not all(
        "seccompProfile" in (c.get("securityContext") or {}) for c in pod.get("containers") or []
    ):
        out.append(Violation("spec.securityContext.seccompProfile", "must be set"))
    out += _check_seccomp("spec.securityContext", context)
    pod_non_root = context.get("runAsNonRoot") is True
    for kind in ("initContainers", "containers"):
        for i, container in enumerate(pod.get(kind) or []):
            out += _check_container(f"spec.{kind}[{i}]", container, pod_non_root)
            image = str(container.get("image", ""))
            if require_digest and "@sha256:" not in image:
                out.append(Violation(f"spec.{kind}[{i}].image", "must be pinned by digest"))
    if not pod.get("containers"):
        out.append(Violation("spec.containers", "at least one container"))
    # PSS baseline "HostPath Volumes" / restricted "Volume Types": allowlist of sources
    for i, volume in enumerate(pod.get("volumes") or []):
        sources = set(volume) - {"name"}
        if not sources or not sources <= _VOLUME_SOURCES:
            out.append(
                Violation(f"spec.volumes[{i}]", f"volume source {sorted(sources)} not allowed")
            )
        empty_dir = volume.get("emptyDir")
        if empty_dir is not None and not empty_dir.get("sizeLimit"):
            out.append(Violation(f"spec.volumes[{i}].emptyDir.sizeLimit", "must be set"))
        secret = volume.get("secret")
        if secret is not None and (
            allowed_secret is None or secret.get("secretName") != allowed_secret
        ):
            out.append(Violation(f"spec.volumes[{i}].secret", "only the function's own Secret"))
    secret_volumes = {str(v.get("name")) for v in pod.get("volumes") or [] if "secret" in v}
    out += _check_secret_use(pod, allowed_secret, secret_volumes)
    return out

"""The kaniko build of a function image, in the builds namespace only.

Design:
- kaniko reads its build context from S3 but only as a tar.gz, while uploads are zips: the
  operator repacks the (already validated) zip with the ``Dockerfile`` rendered here into
  ``<prefix>contexts/<sha256>-<runtime>.tar.gz`` next to the blob.
- The image is ``<registry>/<namespace>-<name>:<sha256>``; kaniko writes the pushed digest
  to ``/dev/termination-log`` (``--digest-file``), the container's termination message,
  which the operator reads to pin the Deployment to ``image@digest``.
- Secrets: the S3 credentials (``build_s3_secret``) and the registry's docker config
  (``registry_secret``) are referenced by the build pod in ``builds_namespace`` only. No
  tenant object references either, and ``check_build_pod_spec`` refuses any other Secret.
- ``backoffLimit: 0``: a failed build stays failed (no rebuild loop); the Job's name is
  deterministic per (namespace, function, sha256), so it is created at most once.

Standards: CIS 5.1.6 (no service account token), 5.4.1 (secrets as files, not env, where
the tool allows: kaniko's AWS SDK reads env), SLSA build L2 "isolated builds" (own namespace).
"""

from __future__ import annotations

from typing import Any

from sless.config import KubernetesSettings, S3Settings
from sless.models import Runtime
from sless.policies import labels
from sless.policies.violations import Violation

#: python: wheels only (no build scripts run); node: install scripts disabled
_INSTALL = {
    Runtime.PYTHON311: (
        "if [ -f /code/requirements.txt ]; then "
        "pip install --no-cache-dir --no-compile --only-binary=:all: --target /deps "
        "-r /code/requirements.txt; fi"
    ),
    Runtime.NODEJS20: (
        "if [ -f /code/package.json ]; then cp /code/package.json /deps/ && "
        "if [ -f /code/package-lock.json ]; then cp /code/package-lock.json /deps/; fi && "
        "cd /deps && npm install --omit=dev --ignore-scripts --no-audit --no-fund; fi"
    ),
}


def dockerfile(runtime: Runtime, base_image: str) -> str:
    """FROM the runtime's base image (its server and CMD), the code in /code, dependencies
    in /deps, then back to uid 65534 so that nothing of the tenant's owns a writable path."""
    return (
        f"FROM {base_image}\n"
        "USER 0:0\n"
        "COPY . /code\n"
        f"RUN mkdir -p /deps && {_INSTALL[runtime]} "
        "&& rm -f /code/Dockerfile && chmod -R a+rX,go-w /code /deps\n"
        "USER 65534:65534\n"
        "WORKDIR /code\n"
    )


def context_key(s3: S3Settings, sha256: str, runtime: Runtime) -> str:
    return f"{s3.prefix}contexts/{sha256}-{runtime.value}.tar.gz"


def image_repository(settings: KubernetesSettings, namespace: str, name: str) -> str:
    return f"{settings.registry.rstrip('/')}/{namespace}-{name}"


def build_job(
    namespace: str,
    name: str,
    sha256: str,
    runtime: Runtime,
    settings: KubernetesSettings,
    s3: S3Settings,
) -> dict[str, Any]:
    if not s3.bucket:
        raise ValueError("Kubernetes mode needs an S3 bucket for code blobs (SLESS_S3_BUCKET)")
    job_labels = labels.build_labels(namespace, name, sha256)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": labels.build_job_name(namespace, name, sha256),
            "namespace": settings.builds_namespace,
            "labels": job_labels,
            "annotations": {labels.SHA256_ANNOTATION: sha256},
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": settings.build_timeout_s,
            "template": {
                "metadata": {"labels": job_labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    **(
                        {"runtimeClassName": settings.build_runtime_class}
                        if settings.build_runtime_class
                        else {}
                    ),
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [_kaniko(namespace, name, sha256, runtime, settings, s3)],
                    "volumes": [
                        {
                            "name": "registry",
                            "secret": {
                                "secretName": settings.registry_secret,
                                "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
                            },
                        }
                    ],
                },
            },
        },
    }


def _kaniko(
    namespace: str,
    name: str,
    sha256: str,
    runtime: Runtime,
    settings: KubernetesSettings,
    s3: S3Settings,
) -> dict[str, Any]:
    """The build container: kaniko reads the context from S3 and pushes the image, its
    digest in the termination message; registry credentials are mounted read-only."""
    return {
        "name": "kaniko",
        "image": settings.kaniko_image,
        "args": [
            f"--context=s3://{s3.bucket}/{context_key(s3, sha256, runtime)}",
            "--dockerfile=Dockerfile",
            f"--destination={image_repository(settings, namespace, name)}:{sha256}",
            "--digest-file=/dev/termination-log",
            "--snapshot-mode=redo",
            "--no-push-cache",
            *(["--insecure", "--insecure-pull"] if settings.registry_insecure else []),
        ],
        "env": _build_env(settings, s3),
        "resources": {
            "requests": {
                "cpu": f"{settings.build_cpu_millis}m",
                "memory": f"{settings.build_memory_mb}Mi",
            },
            "limits": {
                "cpu": f"{max(settings.build_cpu_limit_millis, settings.build_cpu_millis)}m",
                "memory": f"{max(settings.build_memory_limit_mb, settings.build_memory_mb)}Mi",
            },
        },
        "securityContext": kaniko_security_context(),
        "volumeMounts": [{"name": "registry", "mountPath": "/kaniko/.docker", "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


#: what kaniko needs as root: to own, chmod and chown the files of the image it unpacks
#: and writes (CHOWN, FOWNER, FSETID, DAC_OVERRIDE) and to run the install step as the
#: Dockerfile's USER (SETUID, SETGID); every other capability is dropped
KANIKO_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETGID", "SETUID")


def kaniko_security_context() -> dict[str, Any]:
    """kaniko runs root (it unpacks images and runs the Dockerfile's steps in its own root
    filesystem: no user namespace, no read-only root). Everything else is taken away."""
    return {
        "privileged": False,
        "allowPrivilegeEscalation": False,
        "runAsUser": 0,
        "capabilities": {"drop": ["ALL"], "add": list(KANIKO_CAPABILITIES)},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _build_env(settings: KubernetesSettings, s3: S3Settings) -> list[dict[str, Any]]:
    """S3 credentials from the builds namespace's Secret, never a value in the Job."""

    def from_secret(key: str) -> dict[str, Any]:
        ref = {"name": settings.build_s3_secret, "key": key}
        return {"name": key, "valueFrom": {"secretKeyRef": ref}}

    env = [
        from_secret("AWS_ACCESS_KEY_ID"),
        from_secret("AWS_SECRET_ACCESS_KEY"),
        {"name": "AWS_REGION", "value": s3.region},
        {"name": "DOCKER_CONFIG", "value": "/kaniko/.docker"},
    ]
    if s3.endpoint_url:
        env += [
            {"name": "S3_ENDPOINT", "value": s3.endpoint_url},
            {"name": "S3_FORCE_PATH_STYLE", "value": "true"},
        ]
    return env


def check_build_job(job: dict[str, Any], settings: KubernetesSettings) -> list[Violation]:
    """Builds run in the builds namespace only, reference only the two build Secrets,
    mount no host path and no token, run nothing privileged (PSS baseline; CIS 5.1.6)."""
    out: list[Violation] = []
    if job.get("metadata", {}).get("namespace") != settings.builds_namespace:
        out.append(Violation("metadata.namespace", f"must be {settings.builds_namespace!r}"))
    pod = job.get("spec", {}).get("template", {}).get("spec", {})
    allowed_secrets = {settings.build_s3_secret, settings.registry_secret}
    if pod.get("automountServiceAccountToken") is not False:
        out.append(Violation("spec.template.spec.automountServiceAccountToken", "must be false"))
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            out.append(Violation(f"spec.template.spec.{key}", "must be false"))
    for i, volume in enumerate(pod.get("volumes") or []):
        if "hostPath" in volume:
            out.append(Violation(f"spec.template.spec.volumes[{i}]", "hostPath not allowed"))
        secret = volume.get("secret")
        if secret is not None and secret.get("secretName") not in allowed_secrets:
            out.append(Violation(f"spec.template.spec.volumes[{i}]", "Secret not allowed"))
    for i, container in enumerate(pod.get("containers") or []):
        path = f"spec.template.spec.containers[{i}]"
        context = container.get("securityContext") or {}
        if context.get("privileged") or context.get("allowPrivilegeEscalation") is not False:
            out.append(Violation(f"{path}.securityContext", "no privilege, no escalation"))
        caps = context.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []) or set(caps.get("add") or []) - set(
            KANIKO_CAPABILITIES
        ):
            out.append(
                Violation(
                    f"{path}.securityContext.capabilities",
                    f"drop ALL, add only {', '.join(KANIKO_CAPABILITIES)}",
                )
            )
        for j, var in enumerate(container.get("env") or []):
            ref = (var.get("valueFrom") or {}).get("secretKeyRef")
            if ref is not None and ref.get("name") not in allowed_secrets:
                out.append(Violation(f"{path}.env[{j}]", "Secret not allowed"))
    return out

"""Function and invoker pod specs, field by field, and the allowlist checker."""

from __future__ import annotations

import copy

import pytest

from sless.config import KubernetesSettings
from sless.models import FunctionSpec
from sless.policies import (
    check_pod_spec,
    function_pod_spec,
    invoker_pod_spec,
    sandbox_runtime_class,
)

IMAGE = "registry.test/sless/sless-acme-hello@sha256:" + "a" * 64


def render(**spec: object) -> dict:
    return function_pod_spec(
        FunctionSpec.model_validate(spec), "sless-acme", "hello", IMAGE, KubernetesSettings()
    )


def test_function_pod_security_fields() -> None:
    pod = render()
    assert pod["runtimeClassName"] == "gvisor"
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    assert pod["serviceAccountName"] == "sless-function"
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    [container] = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "privileged": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert "hostNetwork" not in pod
    assert "hostPID" not in pod
    assert "hostIPC" not in pod


def test_function_pod_resources_tmp_probes_and_env() -> None:
    pod = render(memory_mb=256, cpu_millis=750, env={"GREETING": "hi"}, timeout_s=12.5)
    [container] = pod["containers"]
    assert container["image"] == IMAGE
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert container["resources"] == {
        "requests": {"cpu": "750m", "memory": "256Mi", "ephemeral-storage": "64Mi"},
        "limits": {"cpu": "750m", "memory": "256Mi", "ephemeral-storage": "64Mi"},
    }
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]
    assert container["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["tcpSocket"] == {"port": 8080}
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env == {
        "GREETING": "hi",
        "PORT": "8080",
        "TMPDIR": "/tmp",
        "SLESS_CODE_DIR": "/code",
        "SLESS_DEPS_DIR": "/deps",
        "SLESS_ENTRYPOINT": "handler.handle",
        "SLESS_FUNCTION": "hello",
        "SLESS_NAMESPACE": "sless-acme",
        "SLESS_TIMEOUT_S": "12.5",
        "SLESS_CONCURRENCY": "4",
        "SLESS_INTERFACE": "sless",
        "SLESS_MEMORY_MB": "256",
    }
    # the runtime's variables come last, so they win over any duplicate
    assert container["env"][0]["name"] == "GREETING"
    assert pod["terminationGracePeriodSeconds"] == 17


def test_function_pod_tells_the_runtime_its_interface() -> None:
    """The pod's runtime gets the same adapter variables as an embedded worker
    (FunctionSpec.interface_env): one code path for both modes."""
    pod = render(interface="lambda", payload_format_version="1.0", memory_mb=512)
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["SLESS_INTERFACE"] == "lambda"
    assert env["SLESS_PAYLOAD_FORMAT_VERSION"] == "1.0"
    assert env["SLESS_MEMORY_MB"] == "512"
    assert env["SLESS_ENTRYPOINT"] == "lambda_function.lambda_handler"


def test_rendered_pods_pass_their_checker() -> None:
    assert check_pod_spec(render(), runtime_class="gvisor", require_digest=True) == []
    invoker = invoker_pod_spec("http://gw/fn/ns/f", "{}", 30, KubernetesSettings())
    assert check_pod_spec(invoker, runtime_class="gvisor") == []


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda p: p.update(hostNetwork=True), "spec.hostNetwork"),
        (lambda p: p.update(hostPID=True), "spec.hostPID"),
        (lambda p: p.update(shareProcessNamespace=True), "spec.shareProcessNamespace"),
        (
            lambda p: p.update(automountServiceAccountToken=True),
            "spec.automountServiceAccountToken",
        ),
        (lambda p: p.update(enableServiceLinks=True), "spec.enableServiceLinks"),
        (lambda p: p.pop("runtimeClassName"), "spec.runtimeClassName"),
        (lambda p: p["securityContext"].update(sysctls=[]), "spec.securityContext.sysctls"),
        (lambda p: p["securityContext"].update(runAsUser=0), "spec.securityContext.runAsUser"),
        (
            lambda p: p["volumes"].append({"name": "h", "hostPath": {"path": "/"}}),
            "spec.volumes[1]",
        ),
        (lambda p: p["volumes"][0]["emptyDir"].clear(), "spec.volumes[0].emptyDir.sizeLimit"),
        (
            lambda p: p["containers"][0]["securityContext"].update(privileged=True),
            "spec.containers[0].securityContext.privileged",
        ),
        (
            lambda p: p["containers"][0]["securityContext"].update(allowPrivilegeEscalation=True),
            "spec.containers[0].securityContext.allowPrivilegeEscalation",
        ),
        (
            lambda p: p["containers"][0]["securityContext"].update(readOnlyRootFilesystem=False),
            "spec.containers[0].securityContext.readOnlyRootFilesystem",
        ),
        (
            lambda p: p["containers"][0]["securityContext"].update(runAsNonRoot=False),
            "spec.containers[0].securityContext.runAsNonRoot",
        ),
        (
            lambda p: p["containers"][0]["securityContext"]["capabilities"].update(
                add=["SYS_TIME"]
            ),
            "spec.containers[0].securityContext.capabilities.add",
        ),
        (
            lambda p: p["containers"][0]["securityContext"]["capabilities"].update(
                drop=["NET_RAW"]
            ),
            "spec.containers[0].securityContext.capabilities.drop",
        ),
        (
            lambda p: p["containers"][0]["securityContext"].update(
                seccompProfile={"type": "Unconfined"}
            ),
            "spec.containers[0].securityContext.seccompProfile.type",
        ),
        (
            lambda p: p["containers"][0]["ports"][0].update(hostPort=80),
            "spec.containers[0].ports[0].hostPort",
        ),
        (
            lambda p: p["containers"][0]["resources"].pop("limits"),
            "spec.containers[0].resources.limits.cpu",
        ),
        (
            lambda p: p["containers"][0].update(image="registry.test/x:latest"),
            "spec.containers[0].image",
        ),
        (
            lambda p: p["containers"][0].update(envFrom=[{"secretRef": {"name": "s"}}]),
            "spec.containers[0].envFrom",
        ),
        (
            lambda p: p.update(initContainers=[{"name": "i", "image": IMAGE}]),
            "spec.initContainers[0].securityContext.allowPrivilegeEscalation",
        ),
    ],
)
def test_checker_reports_each_violation_with_its_path(mutate, path: str) -> None:  # type: ignore[no-untyped-def]
    pod = copy.deepcopy(render())
    mutate(pod)
    violations = check_pod_spec(pod, runtime_class="gvisor", require_digest=True)
    assert path in [v.path for v in violations], violations


def test_an_empty_runtime_class_is_refused_unless_allowed() -> None:
    with pytest.raises(ValueError, match="without a sandbox"):
        sandbox_runtime_class(KubernetesSettings(runtime_class=""))
    allowed = KubernetesSettings(runtime_class="", allow_no_sandbox=True)
    assert sandbox_runtime_class(allowed) is None
    pod = function_pod_spec(FunctionSpec(), "sless-a", "f", IMAGE, allowed)
    assert "runtimeClassName" not in pod
    assert sandbox_runtime_class(KubernetesSettings(runtime_class="kata")) == "kata"


def test_invoker_pod_posts_the_payload_and_keeps_the_answer() -> None:
    pod = invoker_pod_spec("http://gw/fn/ns/f", '{"a": 1}', 10, KubernetesSettings())
    [container] = pod["containers"]
    assert pod["restartPolicy"] == "Never"
    assert container["image"] == "curlimages/curl:8.11.1"
    assert container["args"] == [
        "--silent",
        "--show-error",
        "--fail-with-body",
        "--max-time",
        "105",  # the function's 10 s, the gateway's 90 s hold from zero, 5 s
        "--request",
        "POST",
        "--header",
        "Content-Type: application/json",
        "--data-binary",
        '{"a": 1}',
        "--output",
        "/dev/termination-log",
        "http://gw/fn/ns/f",
    ]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"  # curl's error line


SECRET_SPEC = {"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]}
OWN_SECRET = "fn-hello-secrets"


def test_secrets_come_from_the_functions_own_secret_as_env_and_read_only_files() -> None:
    pod = render(**SECRET_SPEC)
    container = pod["containers"][0]
    assert {
        "name": "DB_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": OWN_SECRET, "key": "dbpass"}},
    } in container["env"]
    assert {"name": "secrets", "mountPath": "/run/secrets", "readOnly": True} in container[
        "volumeMounts"
    ]
    volume = next(v for v in pod["volumes"] if v["name"] == "secrets")
    assert volume["secret"]["secretName"] == OWN_SECRET
    assert volume["secret"]["items"] == [{"key": "dbpass", "path": "dbpass"}]
    # mode 0440, group fsGroup = the function's own group: the function can read its files
    # (without fsGroup they are root's, as the node test found)
    assert volume["secret"]["defaultMode"] == 0o440
    assert pod["securityContext"]["fsGroup"] == container["securityContext"]["runAsGroup"]
    checked = check_pod_spec(
        pod, runtime_class="gvisor", require_digest=True, allowed_secret=OWN_SECRET
    )
    assert checked == []
    # without secrets nothing of the kind is rendered
    plain = render()
    assert all("valueFrom" not in e for e in plain["containers"][0]["env"])
    assert all("secret" not in v for v in plain["volumes"])
    assert "fsGroup" not in plain["securityContext"]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda p: p["volumes"][-1]["secret"].update(secretName="registry-push"),
            "spec.volumes[1]",
        ),
        (
            lambda p: p["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"].update(
                name="sless-build-s3"
            ),
            "spec.containers[0].env[0].valueFrom",
        ),
        (
            lambda p: p["containers"][0]["env"].append(
                {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}
            ),
            "spec.containers[0].env[",
        ),
        (
            lambda p: p["containers"][0]["volumeMounts"][-1].update(readOnly=False),
            "spec.containers[0].volumeMounts[1].readOnly",
        ),
    ],
)
def test_checker_admits_only_the_functions_own_secret_read_only(mutate, path: str) -> None:  # type: ignore[no-untyped-def]
    pod = copy.deepcopy(render(**SECRET_SPEC))
    mutate(pod)
    violations = check_pod_spec(
        pod, runtime_class="gvisor", require_digest=True, allowed_secret=OWN_SECRET
    )
    assert any(v.path.startswith(path) for v in violations), violations


def test_a_pod_may_read_no_secret_unless_one_is_allowed() -> None:
    violations = check_pod_spec(render(**SECRET_SPEC), runtime_class="gvisor")
    paths = {v.path for v in violations}
    assert "spec.volumes[1].secret" in paths
    assert "spec.containers[0].env[0].valueFrom" in paths

"""The kaniko build Job, its Dockerfile and its checker; workloads and names."""

from __future__ import annotations

import copy

import pytest

from sless.config import KubernetesSettings, S3Settings
from sless.models import FunctionSpec, Runtime, TriggerSpec
from sless.policies import (
    build_job,
    check_build_job,
    cron_job,
    dockerfile,
    function_deployment,
    function_job,
    function_service,
    labels,
    replicas_for,
)

SHA = "b" * 64
S3 = S3Settings(bucket="code", endpoint_url="http://s3.test", prefix="code/")


def job() -> dict:
    return build_job("sless-acme", "hello", SHA, Runtime.PYTHON311, KubernetesSettings(), S3)


def test_build_job_runs_in_builds_namespace_with_build_secrets_only() -> None:
    rendered = job()
    assert rendered["metadata"]["namespace"] == "sless-builds"
    assert rendered["metadata"]["name"] == labels.build_job_name("sless-acme", "hello", SHA)
    assert rendered["spec"]["backoffLimit"] == 0
    pod = rendered["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    [kaniko] = pod["containers"]
    assert kaniko["args"][:4] == [
        f"--context=s3://code/code/contexts/{SHA}-python3.11.tar.gz",
        "--dockerfile=Dockerfile",
        f"--destination=registry.sless-system.svc:5000/sless/sless-acme-hello:{SHA}",
        "--digest-file=/dev/termination-log",
    ]
    secrets = {
        e["valueFrom"]["secretKeyRef"]["name"] for e in kaniko["env"] if "valueFrom" in e
    } | {v["secret"]["secretName"] for v in pod["volumes"]}
    assert secrets == {"sless-build-s3", "sless-registry"}
    assert check_build_job(rendered, KubernetesSettings()) == []


def test_build_job_checker() -> None:
    moved = copy.deepcopy(job())
    moved["metadata"]["namespace"] = "sless-acme"
    assert [v.path for v in check_build_job(moved, KubernetesSettings())] == ["metadata.namespace"]
    leaky = copy.deepcopy(job())
    leaky["spec"]["template"]["spec"]["volumes"].append(
        {"name": "x", "secret": {"secretName": "tenant-db"}}
    )
    leaky["spec"]["template"]["spec"]["volumes"].append({"name": "h", "hostPath": {"path": "/"}})
    assert len(check_build_job(leaky, KubernetesSettings())) == 2


def test_kaniko_runs_root_under_gvisor_with_only_the_capabilities_it_needs() -> None:
    pod = job()["spec"]["template"]["spec"]
    assert pod["runtimeClassName"] == "gvisor"
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    [kaniko] = pod["containers"]
    assert kaniko["securityContext"] == {
        "privileged": False,
        "allowPrivilegeEscalation": False,
        "runAsUser": 0,
        "capabilities": {
            "drop": ["ALL"],
            "add": ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETGID", "SETUID"],
        },
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    runc = build_job(
        "n", "f", SHA, Runtime.PYTHON311, KubernetesSettings(build_runtime_class=""), S3
    )
    assert "runtimeClassName" not in runc["spec"]["template"]["spec"]


def test_the_checker_refuses_a_build_with_more_capabilities() -> None:
    for caps in ({"add": ["CHOWN"]}, {"drop": ["ALL"], "add": ["SYS_ADMIN"]}):
        wider = copy.deepcopy(job())
        wider["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"] = caps
        [violation] = check_build_job(wider, KubernetesSettings())
        assert violation.path.endswith("securityContext.capabilities"), violation


def test_build_needs_a_bucket() -> None:
    with pytest.raises(ValueError, match="S3 bucket"):
        build_job("n", "f", SHA, Runtime.PYTHON311, KubernetesSettings(), S3Settings())


def test_dockerfile_installs_wheels_only_and_drops_root() -> None:
    text = dockerfile(Runtime.PYTHON311, "base:1")
    assert text.startswith("FROM base:1\n")
    assert "--only-binary=:all:" in text
    assert text.rstrip().splitlines()[-2:] == ["USER 65534:65534", "WORKDIR /code"]
    assert "--ignore-scripts" in dockerfile(Runtime.NODEJS20, "node:1")


def test_deployment_and_service() -> None:
    spec = FunctionSpec(min_instances=3)
    image = "r/x@sha256:" + "c" * 64
    deployment = function_deployment(spec, "sless-acme", "hello", image, SHA, KubernetesSettings())
    assert deployment["metadata"]["name"] == "fn-hello"
    assert deployment["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "sless",
        "sless.kube5s.ru/function": "hello",
        "sless.kube5s.ru/component": "function",
        "sless.kube5s.ru/track": "current",
    }
    assert deployment["spec"]["replicas"] == 3
    assert deployment["spec"]["selector"] == {
        "matchLabels": {
            "sless.kube5s.ru/function": "hello",
            "sless.kube5s.ru/component": "function",
        }
    }
    assert replicas_for(FunctionSpec(), enabled=True) == 1
    assert replicas_for(spec, enabled=False) == 0
    service = function_service("sless-acme", "hello")
    assert service["metadata"]["name"] == "fn-hello"
    # the current version's Service selects the current track only, never a version's pods
    assert service["spec"]["selector"] == {
        "sless.kube5s.ru/function": "hello",
        "sless.kube5s.ru/component": "function",
        "sless.kube5s.ru/track": "current",
    }
    assert service["spec"]["ports"] == [
        {"name": "http", "protocol": "TCP", "port": 8080, "targetPort": 8080}
    ]
    with pytest.raises(ValueError, match="limited to 60"):
        function_service("sless-acme", "a" * 61)


def test_version_deployment_and_service() -> None:
    """A traffic target's own Deployment and Service select its track only."""
    image = "r/x@sha256:" + "c" * 64
    settings = KubernetesSettings()
    deployment = function_deployment(
        FunctionSpec(), "sless-acme", "hello", image, SHA, settings, version="v4"
    )
    track = {
        "sless.kube5s.ru/function": "hello",
        "sless.kube5s.ru/component": "function",
        "sless.kube5s.ru/track": "v4",
    }
    assert deployment["metadata"]["name"] == "fn-hello-v4"
    assert deployment["spec"]["selector"] == {"matchLabels": track}
    assert deployment["spec"]["template"]["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "sless",
        **track,
    }
    service = function_service("sless-acme", "hello", "v4")
    assert service["metadata"]["name"] == "fn-hello-v4"
    assert service["spec"]["selector"] == track
    # a long name still gives a DNS label of at most 63 characters, one per version
    long_names = {
        function_service("sless-acme", "a" * 60, v)["metadata"]["name"] for v in ("v1", "v12")
    }
    assert len(long_names) == 2
    assert all(len(n) <= 63 and n.startswith("fn-a") for n in long_names)


def test_cron_job_and_function_job() -> None:
    trigger = TriggerSpec(type="cron", function="hello", schedule="*/5 * * * *", enabled=False)
    cron = cron_job("every5", trigger, "sless-acme", "http://gw", 30, KubernetesSettings())
    assert cron["metadata"]["name"] == "tr-every5"
    assert cron["spec"]["suspend"] is True
    assert cron["spec"]["timeZone"] == "UTC"
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][-1] == (
        "http://gw/fn/sless-acme/hello"
    )
    run = function_job(
        "nightly", "hello", 7, {"a": 1}, "sless-acme", "http://gw", 30, KubernetesSettings()
    )
    assert run["metadata"]["name"] == labels.function_job_name("nightly", 7)
    assert run["metadata"]["annotations"] == {"sless.kube5s.ru/run-id": "7"}
    assert run["spec"]["backoffLimit"] == 0


def test_names_fit_kubernetes_limits() -> None:
    assert len(labels.cronjob_name("t" * 63)) <= 52
    assert len(labels.function_job_name("j" * 63, 2**63)) <= 63
    assert labels.function_job_name("a", 1) != labels.function_job_name("a", 2)
    assert len(labels.build_job_name("sless-" + "x" * 57, "f" * 63, SHA)) <= 63

"""The kopf operator against the real control plane: Function build → Deployment, triggers,
FunctionJob run ids, Tenant namespaces and policies, delete cleanup, restart convergence.

The operator runs in-process (``run_operator`` in a thread, with a stop flag). No kubelet
runs, so the tests play the node: a build "finishes" when the test marks the kaniko pod
Succeeded with the digest as its termination message (what ``--digest-file
/dev/termination-log`` writes); the Job controller then completes the Job, exactly as on a
node. Code blobs live in a real S3 API (moto's server).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import ipaddress
import json
import tarfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.utils import parse_quantity
from pydantic import SecretStr

from sless import policies
from sless.config import Settings
from sless.models import FunctionSpec, Runtime
from sless.operator import run_operator
from sless.policies import labels
from tests import support
from tests.support import s3_client

if TYPE_CHECKING:
    from tests.kube.conftest import KubeTestenv

pytestmark = [pytest.mark.kube, pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION = "sless.kube5s.ru", "v1"
BUCKET = "sless-operator-test"
REGISTRY = "registry.test:5000/sless"
DIGEST = "sha256:" + "d" * 64
BUILDS = "sless-builds"


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    return support.wait_for(what, check, timeout, interval=0.2)


def missing(check: Callable[[], Any]) -> bool:
    try:
        check()
    except ApiException as e:
        if e.status == 404:
            return True
        raise
    return False


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(kube_testenv: KubeTestenv) -> Iterator[client.ApiClient]:
    with kube_testenv.api_client() as api_client:
        yield api_client


def install_crds(api: client.ApiClient) -> None:
    """Server-side apply deploy/crds/*.yaml (taking over a CRD another test installed)."""
    ext = client.ApiextensionsV1Api(api)
    for path in sorted((ROOT / "deploy" / "crds").glob("*.yaml")):
        crd = json.loads(path.read_text().split("\n", 1)[1])
        ext.patch_custom_resource_definition(
            crd["metadata"]["name"],
            crd,
            field_manager="sless-tests",
            force=True,
            _content_type="application/apply-patch+yaml",
        )

        def established(name: str = crd["metadata"]["name"]) -> bool:
            got = ext.read_custom_resource_definition(name)
            return any(
                c.type == "Established" and c.status == "True"
                for c in (got.status.conditions or [])
            )

        wait_for(f"{path.name} established", established)


@pytest.fixture(scope="module")
def crds(api: client.ApiClient) -> None:
    install_crds(api)
    node = client.NodeV1Api(api)
    try:
        node.create_runtime_class(policies.runtime_class())
    except ApiException as e:
        if e.status != 409:
            raise


@pytest.fixture(scope="module")
def s3(s3_endpoint: str) -> Any:
    client = s3_client(s3_endpoint)
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture(scope="module")
def op_settings(kube_testenv: KubeTestenv, s3_endpoint: str) -> Settings:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    k = settings.kubernetes
    k.kubeconfig = kube_testenv.kubeconfig
    k.registry = REGISTRY
    k.retry_delay_s = 1.0
    k.api_server_cidrs = ["192.0.2.10/32"]
    # the provider allows its tenants 10/8 (the functions here reach 10.0.0.0/8:5432), no
    # other private range
    settings.egress.private_allowed = [ipaddress.ip_network("10.0.0.0/8")]
    k.invoke_base_url = "http://sless-gateway.sless-system.svc:8080"
    settings.s3.bucket = BUCKET
    settings.s3.endpoint_url = s3_endpoint
    settings.s3.access_key_id = SecretStr("test")
    settings.s3.secret_access_key = SecretStr("test")
    return settings


class RunningOperator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.thread: threading.Thread | None = None
        self.stop_flag = threading.Event()

    def start(self) -> None:
        self.stop_flag = threading.Event()
        ready = threading.Event()
        self.thread = threading.Thread(
            target=run_operator,
            args=(self.settings,),
            kwargs={"stop_flag": self.stop_flag, "ready_flag": ready},
            daemon=True,
            name="sless-operator",
        )
        self.thread.start()
        assert ready.wait(30), "operator did not get ready"

    def stop(self) -> None:
        assert self.thread is not None
        self.stop_flag.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "operator did not stop"


@pytest.fixture(scope="module")
def operator(op_settings: Settings, crds: None, s3: Any) -> Iterator[RunningOperator]:
    running = RunningOperator(op_settings)
    running.start()
    yield running
    running.stop()


class Kube:
    """Small typed helpers over the kubernetes client for the assertions below."""

    def __init__(self, api: client.ApiClient) -> None:
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.net = client.NetworkingV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.api = api

    def create(self, plural: str, ns: str | None, name: str, spec: dict[str, Any]) -> None:
        kind = {"functions": "Function", "triggers": "Trigger", "functionjobs": "FunctionJob"}
        if ns is None:
            self.custom.create_cluster_custom_object(
                GROUP,
                VERSION,
                plural,
                {
                    "apiVersion": f"{GROUP}/{VERSION}",
                    "kind": "Tenant",
                    "metadata": {"name": name},
                    "spec": spec,
                },
            )
            return
        self.custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            ns,
            plural,
            {
                "apiVersion": f"{GROUP}/{VERSION}",
                "kind": kind[plural],
                "metadata": {"name": name},
                "spec": spec,
            },
        )

    def get(self, plural: str, ns: str | None, name: str) -> dict[str, Any]:
        if ns is None:
            got: dict[str, Any] = self.custom.get_cluster_custom_object(
                GROUP, VERSION, plural, name
            )
            return got
        got = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, plural, name)
        return got

    def patch_spec(self, plural: str, ns: str, name: str, spec: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, plural, name, {"spec": spec})

    def patch_status(self, plural: str, ns: str, name: str, status: dict[str, Any]) -> None:
        self.custom.patch_namespaced_custom_object_status(
            GROUP, VERSION, ns, plural, name, {"status": status}
        )

    def delete(self, plural: str, ns: str, name: str) -> None:
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, plural, name)

    def status(self, plural: str, ns: str | None, name: str) -> dict[str, Any]:
        status: dict[str, Any] = self.get(plural, ns, name).get("status") or {}
        return status

    def wait_phase(
        self, plural: str, ns: str | None, name: str, phase: str, timeout: float = 60
    ) -> dict[str, Any]:
        return wait_for(  # type: ignore[no-any-return]
            f"{plural}/{name} phase {phase} (now {self.status(plural, ns, name)})",
            lambda: (s := self.status(plural, ns, name)).get("phase") == phase and s,
            timeout,
        )

    def finish_job(self, ns: str, job_name: str, message: str, *, succeeded: bool = True) -> None:
        """Play the node: the Job's pod ran and terminated with ``message`` as its
        termination message; the Job controller then completes (or fails) the Job."""
        pod = wait_for(
            f"pod of {job_name}",
            lambda: self.core.list_namespaced_pod(ns, label_selector=f"job-name={job_name}").items,
        )[0]
        container = pod.spec.containers[0]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.core.patch_namespaced_pod_status(
            pod.metadata.name,
            ns,
            {
                "status": {
                    "phase": "Succeeded" if succeeded else "Failed",
                    "containerStatuses": [
                        {
                            "name": container.name,
                            "image": container.image,
                            "imageID": "",
                            "ready": False,
                            "restartCount": 0,
                            "started": False,
                            "state": {
                                "terminated": {
                                    "exitCode": 0 if succeeded else 1,
                                    "reason": "Completed" if succeeded else "Error",
                                    "message": message,
                                    "startedAt": now,
                                    "finishedAt": now,
                                }
                            },
                        }
                    ],
                }
            },
        )


@pytest.fixture(scope="module")
def kube(api: client.ApiClient) -> Kube:
    return Kube(api)


def quantities(values: dict[str, str]) -> dict[str, Any]:
    return {key: parse_quantity(value) for key, value in values.items()}


def make_zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return buf.getvalue()


HANDLER = {"handler.py": "def handle(event, context):\n    return {'ok': True}\n"}


def upload(s3: Any, settings: Settings, files: dict[str, str]) -> dict[str, Any]:
    """What the gateway's upload does: the blob in S3, the CodeRef for the spec."""
    data = make_zip(files)
    sha = hashlib.sha256(data).hexdigest()
    key = f"{settings.s3.prefix}{sha}.zip"
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    return {"sha256": sha, "blob_key": key, "size": len(data)}


@pytest.fixture(scope="module")
def tenant(kube: Kube, operator: RunningOperator) -> Iterator[str]:
    """A tenant made by the operator from a Tenant resource; yields its namespace."""
    name = f"t{uuid.uuid4().hex[:8]}"
    kube.create("tenants", None, name, {"plan": "default"})
    status = kube.wait_phase("tenants", None, name, "Ready")
    ns = status["namespace"]

    def quota_ready() -> bool:
        quota = kube.core.read_namespaced_resource_quota("sless-quota", ns)
        return bool(quota.status and quota.status.hard)

    wait_for("quota status", quota_ready)
    yield ns
    kube.custom.delete_cluster_custom_object(GROUP, VERSION, "tenants", name)


def deploy_function(
    kube: Kube, s3: Any, settings: Settings, ns: str, name: str, spec: dict[str, Any] | None = None
) -> tuple[dict[str, Any], str]:
    """Create a Function with code (as the gateway would), finish its build, wait Ready."""
    code = upload(s3, settings, {**HANDLER, "x.txt": name})
    body = FunctionSpec.model_validate({**(spec or {}), "code": code}).model_dump(mode="json")
    kube.create("functions", ns, name, body)
    kube.patch_status("functions", ns, name, {"phase": "Pending"})
    job_name = labels.build_job_name(ns, name, code["sha256"])
    wait_for(
        "build job", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    kube.finish_job(BUILDS, job_name, DIGEST)
    return kube.wait_phase("functions", ns, name, "Ready"), code["sha256"]


# -- tests -------------------------------------------------------------------------------


def test_function_build_job_then_pinned_deployment(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "hello"
    code = upload(s3, op_settings, HANDLER)
    sha = code["sha256"]
    spec = FunctionSpec.model_validate(
        {"env": {"GREETING": "hi"}, "memory_mb": 256, "cpu_millis": 250, "code": code}
    ).model_dump(mode="json")
    kube.create("functions", ns, name, spec)
    kube.patch_status(
        "functions", ns, name, {"phase": "Pending", "validation": {"verdict": "allow"}}
    )

    job_name = labels.build_job_name(ns, name, sha)
    job = wait_for(
        "build job",
        lambda: (
            None
            if missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
            else kube.api.sanitize_for_serialization(
                kube.batch.read_namespaced_job(job_name, BUILDS)
            )
        ),
    )
    # the build Job, exactly
    assert job["metadata"]["namespace"] == BUILDS
    assert job["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "sless",
        "sless.kube5s.ru/component": "build",
        "sless.kube5s.ru/function": name,
        "sless.kube5s.ru/namespace": ns,
        "sless.kube5s.ru/code": sha[:63],
    }
    assert job["metadata"]["annotations"]["sless.kube5s.ru/sha256"] == sha
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["activeDeadlineSeconds"] == 900
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    [kaniko] = pod["containers"]
    assert kaniko["image"] == "gcr.io/kaniko-project/executor:v1.23.2"
    assert kaniko["args"] == [
        f"--context=s3://{BUCKET}/code/contexts/{sha}-python3.11.tar.gz",
        "--dockerfile=Dockerfile",
        f"--destination={REGISTRY}/{ns}-{name}:{sha}",
        "--digest-file=/dev/termination-log",
        "--snapshot-mode=redo",
        "--no-push-cache",
    ]
    env = {e["name"]: e for e in kaniko["env"]}
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"] == {
        "name": "sless-build-s3",
        "key": "AWS_ACCESS_KEY_ID",
    }
    assert env["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "sless-build-s3"
    assert env["S3_ENDPOINT"]["value"] == op_settings.s3.endpoint_url
    assert env["S3_FORCE_PATH_STYLE"]["value"] == "true"
    assert kaniko["terminationMessagePath"] == "/dev/termination-log"
    assert pod["volumes"] == [
        {
            "name": "registry",
            "secret": {
                "secretName": "sless-registry",
                "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
                "defaultMode": 420,
            },
        }
    ]
    # the build context: the code plus the platform's Dockerfile, as kaniko reads it
    context = s3.get_object(Bucket=BUCKET, Key=f"code/contexts/{sha}-python3.11.tar.gz")
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(context["Body"].read()))) as tar:
        assert sorted(tar.getnames()) == ["Dockerfile", "handler.py"]
        dockerfile = tar.extractfile("Dockerfile").read().decode()  # type: ignore[union-attr]
    assert dockerfile == policies.dockerfile(
        Runtime.PYTHON311, op_settings.kubernetes.runtime_images["python3.11"]
    )
    status = kube.wait_phase("functions", ns, name, "Building")
    assert status["observed_sha256"] == sha
    assert status["validation"] == {"verdict": "allow"}  # the gateway's field is kept

    kube.finish_job(BUILDS, job_name, DIGEST + "\n")
    status = kube.wait_phase("functions", ns, name, "Ready")
    image = f"{REGISTRY}/{ns}-{name}@{DIGEST}"
    assert status["image"] == image
    assert status["builds"] == {sha: image}
    # written with a merge patch, where a null field means "absent"
    expected = {k: v for k, v in spec.items() if v is not None}
    expected["code"] = {k: v for k, v in spec["code"].items() if v is not None}
    assert status["servingSpec"] == expected
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Built": "True",
        "Deployed": "True",
        "Ready": "True",
    }

    deployment = kube.api.sanitize_for_serialization(
        kube.apps.read_namespaced_deployment(f"fn-{name}", ns)
    )
    assert deployment["spec"]["replicas"] == 1
    assert deployment["metadata"]["ownerReferences"][0]["kind"] == "Function"
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"] == {
        **labels.function_labels(name),
        labels.TRACK: labels.CURRENT_TRACK,
    }
    assert template["spec"]["containers"][0]["image"] == image
    assert template["spec"]["runtimeClassName"] == "gvisor"
    assert (
        policies.check_pod_spec(template["spec"], runtime_class="gvisor", require_digest=True) == []
    )
    env = {e["name"]: e.get("value") for e in template["spec"]["containers"][0]["env"]}
    assert env["GREETING"] == "hi"
    assert env["SLESS_FUNCTION"] == name
    assert env["SLESS_NAMESPACE"] == ns
    assert template["spec"]["containers"][0]["resources"]["limits"] == {
        "cpu": "250m",
        "memory": "256Mi",
        "ephemeral-storage": "64Mi",
    }
    service = kube.core.read_namespaced_service(f"fn-{name}", ns)
    assert service.spec.selector == labels.track_selector(name, labels.CURRENT_TRACK)
    assert [(p.port, p.target_port) for p in service.spec.ports] == [(8080, 8080)]

    # the pod template is admitted by Pod Security "restricted" (server-side dry run) ...
    pod_body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dry-run-fn", "labels": template["metadata"]["labels"]},
        "spec": template["spec"],
    }
    kube.core.create_namespaced_pod(ns, pod_body, dry_run="All")
    # ... and a privileged variant of it is not
    privileged = json.loads(json.dumps(pod_body))
    privileged["spec"]["containers"][0]["securityContext"]["privileged"] = True
    privileged["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    with pytest.raises(ApiException) as refused:
        kube.core.create_namespaced_pod(ns, privileged, dry_run="All")
    assert refused.value.status == 403
    assert "restricted" in refused.value.body


def test_tenant_objects_match_the_policies_and_refuse_unsafe_pods(
    kube: Kube, op_settings: Settings, tenant: str
) -> None:
    ns = tenant
    tenant_name = ns.removeprefix("sless-")
    expected = {
        (o["kind"], o["metadata"]["name"]): o
        for o in policies.tenant_objects(tenant_name, "default", op_settings.kubernetes, 8080)
    }
    namespace = kube.core.read_namespace(ns)
    for key, value in expected[("Namespace", ns)]["metadata"]["labels"].items():
        assert namespace.metadata.labels[key] == value
    assert namespace.metadata.labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert namespace.metadata.owner_references[0].kind == "Tenant"
    sa = kube.core.read_namespaced_service_account("sless-function", ns)
    assert sa.automount_service_account_token is False
    quota = kube.api.sanitize_for_serialization(
        kube.core.read_namespaced_resource_quota("sless-quota", ns)
    )
    # the API server canonicalises quantities (4000m -> 4): compare values, not spellings
    assert quantities(quota["spec"]["hard"]) == quantities(
        expected[("ResourceQuota", "sless-quota")]["spec"]["hard"]
    )
    [limits] = kube.api.sanitize_for_serialization(
        kube.core.read_namespaced_limit_range("sless-limits", ns)
    )["spec"]["limits"]
    [want] = expected[("LimitRange", "sless-limits")]["spec"]["limits"]
    assert limits["type"] == want["type"] == "Container"
    for key in ("default", "defaultRequest", "max"):
        assert quantities(limits[key]) == quantities(want[key]), key
    for (kind, name), obj in expected.items():
        if kind != "NetworkPolicy":
            continue
        got = kube.api.sanitize_for_serialization(kube.net.read_namespaced_network_policy(name, ns))
        assert got["spec"] == obj["spec"], name
    assert {p.metadata.name for p in kube.net.list_namespaced_network_policy(ns).items} >= {
        "sless-default-deny",
        "sless-allow-gateway-ingress",
        "sless-allow-dns",
        "sless-allow-invoker-egress",
    }
    # one RoleBinding: the gateway's, as rendered (its rights: tests/kube/test_policies_rbac.py)
    bindings = kube.api.sanitize_for_serialization(
        client.RbacAuthorizationV1Api(kube.api).list_namespaced_role_binding(ns)
    )["items"]
    want_binding = expected[("RoleBinding", "sless-gateway")]
    assert [(b["metadata"]["name"], b["roleRef"], b["subjects"]) for b in bindings] == [
        ("sless-gateway", want_binding["roleRef"], want_binding["subjects"])
    ]

    def pod(name: str, **changes: Any) -> dict[str, Any]:
        spec = policies.function_pod_spec(
            FunctionSpec(), ns, "x", "registry.test/x@" + DIGEST, op_settings.kubernetes
        )
        container = spec["containers"][0]
        for key, value in changes.items():
            if key == "volumes":
                spec["volumes"] = value
                container["volumeMounts"] = [{"name": "host", "mountPath": "/host"}]
            else:
                container["securityContext"][key] = value
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}

    # the compliant pod is admitted...
    kube.core.create_namespaced_pod(ns, pod("ok"), dry_run="All")
    # ... a privileged pod, a hostPath pod and a root pod are each refused
    unsafe = {
        "privileged": pod("privileged", privileged=True, allowPrivilegeEscalation=True),
        "hostpath": pod("hostpath", volumes=[{"name": "host", "hostPath": {"path": "/"}}]),
        "root": pod("root", runAsUser=0, runAsNonRoot=False),
    }
    for what, body in unsafe.items():
        with pytest.raises(ApiException) as refused:
            kube.core.create_namespaced_pod(ns, body, dry_run="All")
        assert refused.value.status == 403, what
        message = json.loads(refused.value.body)["message"]
        assert 'violates PodSecurity "restricted:latest"' in message, what
        # and the operator's own checker refuses each before the API server would
        assert policies.check_pod_spec(body["spec"], runtime_class="gvisor"), what


def test_unknown_plan_fails_the_tenant(kube: Kube, operator: RunningOperator) -> None:
    name = f"t{uuid.uuid4().hex[:8]}"
    kube.create("tenants", None, name, {"plan": "platinum"})
    status = kube.wait_phase("tenants", None, name, "Failed")
    assert "unknown plan" in status["message"]
    assert missing(lambda: kube.core.read_namespace(f"sless-{name}"))
    kube.custom.delete_cluster_custom_object(GROUP, VERSION, "tenants", name)


def test_same_sha_is_never_built_twice(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "twice"
    status, sha = deploy_function(kube, s3, op_settings, ns, name)
    job_name = labels.build_job_name(ns, name, sha)
    first_uid = kube.batch.read_namespaced_job(job_name, BUILDS).metadata.uid
    # a spec change with the same code redeploys without a build
    kube.patch_spec("functions", ns, name, {"memory_mb": 512, "min_instances": 2})
    wait_for(
        "memory change deployed",
        lambda: kube.apps.read_namespaced_deployment(f"fn-{name}", ns).spec.replicas == 2,
    )
    deployment = kube.apps.read_namespaced_deployment(f"fn-{name}", ns)
    assert deployment.spec.template.spec.containers[0].resources.limits["memory"] == "512Mi"
    # the build Job is gone (an admin cleaned up): the recorded sha256 is still not rebuilt
    kube.batch.delete_namespaced_job(job_name, BUILDS, propagation_policy="Background")
    wait_for(
        "job deleted", lambda: missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    kube.patch_spec("functions", ns, name, {"env": {"A": "1"}})
    wait_for(
        "env change deployed",
        lambda: any(
            e.name == "A"
            for e in kube.apps.read_namespaced_deployment(f"fn-{name}", ns)
            .spec.template.spec.containers[0]
            .env
        ),
    )
    assert missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    assert kube.status("functions", ns, name)["builds"] == {sha: status["image"]}
    assert first_uid


def test_failed_build_is_failed_with_log_tail_and_not_retried(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "broken"
    code = upload(s3, op_settings, {**HANDLER, "y.txt": "broken"})
    body = FunctionSpec.model_validate({"code": code}).model_dump(mode="json")
    kube.create("functions", ns, name, body)
    job_name = labels.build_job_name(ns, name, code["sha256"])
    wait_for(
        "build job", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    # kaniko's coloured log, long enough that cutting it short would lose its head
    steps = "".join(f"\x1b[36mINFO\x1b[0m[0001] step {i}: copying files\n" for i in range(60))
    failing = "\x1b[31mERRO\x1b[0m[0003] error building image: pip failed\n"
    kube.finish_job(BUILDS, job_name, steps + failing + "exit status 1\n", succeeded=False)
    status = kube.wait_phase("functions", ns, name, "Failed")
    # no kubelet serves logs here: the termination message stands in
    assert status["message"].startswith(f"build of {code['sha256'][:12]} failed:\n")
    assert "error building image: pip failed" in status["message"]
    assert "\x1b" not in status["message"]
    built = {c["type"]: c for c in status["conditions"]}["Built"]
    assert "\x1b" not in built["message"]
    assert "pip failed" in built["message"]
    assert {c["type"]: c["reason"] for c in status["conditions"]}["Built"] == "BuildFailed"
    assert missing(lambda: kube.apps.read_namespaced_deployment(f"fn-{name}", ns))
    time.sleep(3)  # several retry delays: still exactly the one failed Job
    jobs = kube.batch.list_namespaced_job(
        BUILDS, label_selector=f"sless.kube5s.ru/function={name},sless.kube5s.ru/namespace={ns}"
    ).items
    assert [j.metadata.name for j in jobs] == [job_name]


def test_an_unschedulable_build_says_why_and_fails_at_its_deadline(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "nocpu"
    k = op_settings.kubernetes
    saved = k.build_timeout_s, k.build_cpu_millis
    k.build_timeout_s, k.build_cpu_millis = 10, 300
    try:
        code = upload(s3, op_settings, {**HANDLER, "z.txt": name})
        body = FunctionSpec.model_validate({"code": code}).model_dump(mode="json")
        kube.create("functions", ns, name, body)
        job_name = labels.build_job_name(ns, name, code["sha256"])
        pod = wait_for(
            f"pod of {job_name}",
            lambda: (
                kube.core.list_namespaced_pod(BUILDS, label_selector=f"job-name={job_name}").items
            ),
        )[0]
    finally:
        k.build_timeout_s, k.build_cpu_millis = saved
    [kaniko] = pod.spec.containers
    assert kaniko.resources.requests["cpu"] == "300m"  # the configured request
    # play the scheduler: what kube-scheduler writes on a node without room
    reason = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available."
    kube.core.patch_namespaced_pod_status(
        pod.metadata.name,
        BUILDS,
        {
            "status": {
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": reason,
                    }
                ]
            }
        },
    )
    waiting = wait_for(
        "the scheduler's reason in the status",
        lambda: (
            "waiting for a node" in (s := kube.status("functions", ns, name)).get("message", "")
            and s
        ),
    )
    assert waiting["phase"] == "Building"
    assert waiting["message"] == f"building {code['sha256'][:12]}: waiting for a node: {reason}"
    built = {c["type"]: c for c in waiting["conditions"]}["Built"]
    assert built["reason"] == "Unschedulable"
    # the Job controller fails the Job at its deadline; the status says so, and what it waited for
    failed = kube.wait_phase("functions", ns, name, "Failed", timeout=90)
    assert failed["message"].startswith(
        f"build of {code['sha256'][:12]} failed: it did not finish within 10 s"
    )
    assert f"waiting for a node: {reason}" in failed["message"]


@pytest.fixture
def node(kube: Kube) -> Iterator[str]:
    """A Node object with a public and an internal address (no kubelet behind it: the
    test control plane schedules nothing); its addresses are in its status."""
    name = f"sless-test-node-{uuid.uuid4().hex[:6]}"
    kube.core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    addresses = [
        {"type": "ExternalIP", "address": "203.0.113.7"},
        {"type": "InternalIP", "address": "10.9.0.5"},
        {"type": "Hostname", "address": name},
    ]
    kube.core.patch_node_status(name, {"status": {"addresses": addresses}})
    try:
        yield name
    finally:
        kube.core.delete_node(name)


def test_host_egress_is_refused_and_cidr_egress_excepts_metadata_and_api(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str, node: str
) -> None:
    ns = tenant
    deploy_function(kube, s3, op_settings, ns, "netok", {"egress": ["0.0.0.0/0:443"]})
    policy = kube.api.sanitize_for_serialization(
        kube.net.read_namespaced_network_policy("fn-netok-egress", ns)
    )
    [rule] = policy["spec"]["egress"]
    block = rule["to"][0]["ipBlock"]
    assert block["cidr"] == "0.0.0.0/0"
    # link-local (the metadata address), the configured API address and the kubernetes
    # Service's cluster IP (inside the allowed 10/8), the private ranges not allowed
    assert "169.254.0.0/16" in block["except"]
    assert "192.0.2.10/32" in block["except"]
    assert "10.96.0.1/32" in block["except"]
    # a node's own addresses (its kubelet answers there), a public one included; its
    # internal one lies in the allowed 10/8
    assert {"203.0.113.7/32", "10.9.0.5/32"} <= set(block["except"])
    assert {"172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"} <= set(block["except"])
    assert "10.0.0.0/8" not in block["except"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 443}]
    assert policy["spec"]["podSelector"] == {
        "matchLabels": labels.track_selector("netok", labels.CURRENT_TRACK)
    }

    code = upload(s3, op_settings, {**HANDLER, "z.txt": "host"})
    body = FunctionSpec.model_validate(
        {"egress": ["api.example.com:443"], "code": code}
    ).model_dump(mode="json")
    kube.create("functions", ns, "nethost", body)
    job_name = labels.build_job_name(ns, "nethost", code["sha256"])
    wait_for(
        "build job", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    kube.finish_job(BUILDS, job_name, DIGEST)
    status = kube.wait_phase("functions", ns, "nethost", "Failed")
    assert "host names cannot be enforced by NetworkPolicy" in status["message"]
    assert missing(lambda: kube.apps.read_namespaced_deployment("fn-nethost", ns))

    # a private range the provider does not allow (its nodes, a database): refused
    code = upload(s3, op_settings, {**HANDLER, "z.txt": "private"})
    body = FunctionSpec.model_validate(
        {"egress": ["192.168.0.0/16:5432"], "code": code}
    ).model_dump(mode="json")
    kube.create("functions", ns, "netprivate", body)
    job_name = labels.build_job_name(ns, "netprivate", code["sha256"])
    wait_for(
        "build job", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    kube.finish_job(BUILDS, job_name, DIGEST)
    status = kube.wait_phase("functions", ns, "netprivate", "Failed")
    assert "SLESS_EGRESS_PRIVATE_ALLOWED" in status["message"], status
    assert missing(lambda: kube.apps.read_namespaced_deployment("fn-netprivate", ns))
    assert missing(lambda: kube.net.read_namespaced_network_policy("fn-netprivate-egress", ns))


def test_a_node_that_joins_later_is_excepted_from_egress_at_once(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    # the function's policy is written before the node exists; the node's kubelet port is
    # inside the rule's range. Joining must write the policy again, without any change to
    # the function, and leaving must drop the node's addresses.
    ns = tenant
    deploy_function(kube, s3, op_settings, ns, "netlate", {"egress": ["0.0.0.0/0:10250"]})
    joined = {"203.0.113.77/32", "10.9.0.77/32"}

    def excepted() -> set[str]:
        policy = kube.net.read_namespaced_network_policy("fn-netlate-egress", ns)
        return set(policy.spec.egress[0].to[0].ip_block._except or [])

    assert not joined & excepted()
    name = f"sless-test-late-{uuid.uuid4().hex[:6]}"
    kube.core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    try:
        addresses = [
            {"type": "ExternalIP", "address": "203.0.113.77"},
            {"type": "InternalIP", "address": "10.9.0.77"},
        ]
        kube.core.patch_node_status(name, {"status": {"addresses": addresses}})
        wait_for("the joined node's addresses excepted", lambda: joined <= excepted())
    finally:
        kube.core.delete_node(name)
    wait_for("the node's addresses dropped", lambda: not joined & excepted())
    assert "169.254.0.0/16" in excepted()


def test_triggers_http_and_cron_on_and_off(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "trig"
    deploy_function(kube, s3, op_settings, ns, name, {"timeout_s": 10})
    replicas = lambda: kube.apps.read_namespaced_deployment(f"fn-{name}", ns).spec.replicas  # noqa: E731

    kube.create("triggers", ns, "web", {"type": "http", "function": name, "enabled": True})
    assert kube.wait_phase("triggers", ns, "web", "Active")
    assert replicas() == 1
    kube.patch_spec("triggers", ns, "web", {"enabled": False})
    kube.wait_phase("triggers", ns, "web", "Suspended")
    wait_for("scaled to 0", lambda: replicas() == 0)
    kube.patch_spec("triggers", ns, "web", {"enabled": True})
    wait_for("scaled back to 1", lambda: replicas() == 1)

    kube.create(
        "triggers",
        ns,
        "nightly",
        {"type": "cron", "function": name, "schedule": "0 3 * * *", "payload": {"n": 1}},
    )
    status = kube.wait_phase("triggers", ns, "nightly", "Active")
    cron = kube.api.sanitize_for_serialization(
        kube.batch.read_namespaced_cron_job(status["cronjob"], ns)
    )
    assert cron["metadata"]["name"] == "tr-nightly"
    assert cron["spec"]["schedule"] == "0 3 * * *"
    assert cron["spec"]["suspend"] is False
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args[-1] == f"http://sless-gateway.sless-system.svc:8080/fn/{ns}/{name}"
    assert args[args.index("--data-binary") + 1] == '{"n": 1}'
    assert pod["containers"][0]["image"] == op_settings.kubernetes.invoker_image
    assert (
        cron["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"][
            "sless.kube5s.ru/component"
        ]
        == "invoker"
    )
    # its pods are admitted by "restricted" too
    kube.core.create_namespaced_pod(
        ns,
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cron-dry"}, "spec": pod},
        dry_run="All",
    )
    kube.patch_spec("triggers", ns, "nightly", {"enabled": False})
    kube.wait_phase("triggers", ns, "nightly", "Suspended")
    wait_for(
        "cronjob suspended",
        lambda: kube.batch.read_namespaced_cron_job("tr-nightly", ns).spec.suspend is True,
    )
    kube.delete("triggers", ns, "nightly")
    wait_for(
        "cronjob deleted",
        lambda: missing(lambda: kube.batch.read_namespaced_cron_job("tr-nightly", ns)),
    )
    kube.patch_spec("triggers", ns, "web", {"enabled": False})
    wait_for("scaled to 0 again", lambda: replicas() == 0)
    # a rabbitmq trigger is consumed by `sless events`, which calls the function's pods:
    # while it is enabled the function runs, even with its http trigger disabled
    queue = {"type": "rabbitmq", "function": name, "url_secret": "broker", "queue": "orders"}
    kube.create("triggers", ns, "orders", queue)
    assert kube.wait_phase("triggers", ns, "orders", "Active")
    wait_for("an enabled rabbitmq trigger scales back", lambda: replicas() == 1)
    kube.patch_spec("triggers", ns, "orders", {"enabled": False})
    kube.wait_phase("triggers", ns, "orders", "Suspended")
    wait_for("nothing calls it: scaled to 0", lambda: replicas() == 0)
    kube.delete("triggers", ns, "orders")
    kube.delete("triggers", ns, "web")
    wait_for("deleting the disabled trigger scales back", lambda: replicas() == 1)


def test_the_autoscalers_replicas_survive_a_reapply_within_the_new_bounds(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "scaled"
    deploy_function(kube, s3, op_settings, ns, name, {"max_instances": 5})
    deployment = f"fn-{name}"
    replicas = lambda: kube.apps.read_namespaced_deployment(deployment, ns).spec.replicas  # noqa: E731
    assert replicas() == 1
    # the gateway's autoscaler writes 4 through the scale subresource
    kube.apps.patch_namespaced_deployment_scale(deployment, ns, {"spec": {"replicas": 4}})
    # a spec change makes the operator re-apply the Deployment: the 4 stays
    kube.patch_spec("functions", ns, name, {"env": {"MODE": "x"}})
    wait_for(
        "re-applied",
        lambda: any(
            e.name == "MODE"
            for e in kube.apps.read_namespaced_deployment(deployment, ns)
            .spec.template.spec.containers[0]
            .env
            or []
        ),
    )
    assert replicas() == 4
    # a lower max_instances brings it down to the new bound
    kube.patch_spec("functions", ns, name, {"max_instances": 2})
    wait_for("clamped to max_instances", lambda: replicas() == 2)


def test_function_job_run_ids(kube: Kube, s3: Any, op_settings: Settings, tenant: str) -> None:
    ns, fn = tenant, "jobfn"
    deploy_function(kube, s3, op_settings, ns, fn)

    def run_jobs() -> list[str]:
        return sorted(
            j.metadata.name
            for j in kube.batch.list_namespaced_job(
                ns, label_selector="sless.kube5s.ru/functionjob=nightly"
            ).items
        )

    kube.create("functionjobs", ns, "nightly", {"function": fn, "run_id": 0, "payload": {"a": 1}})
    kube.wait_phase("functionjobs", ns, "nightly", "Idle")
    assert run_jobs() == []

    kube.patch_spec("functionjobs", ns, "nightly", {"run_id": 1})
    status = kube.wait_phase("functionjobs", ns, "nightly", "Running")
    assert status["run_id"] == 1
    first = labels.function_job_name("nightly", 1)
    assert status["job_name"] == first
    assert run_jobs() == [first]
    job = kube.api.sanitize_for_serialization(kube.batch.read_namespaced_job(first, ns))
    assert job["spec"]["backoffLimit"] == 0
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--data-binary") + 1] == '{"a": 1}'
    kube.finish_job(ns, first, '{"ok": true}')
    status = kube.wait_phase("functionjobs", ns, "nightly", "Succeeded")
    assert status["result"] == '{"ok": true}'

    # the same run id (a payload change does not make a run) never runs again
    kube.patch_spec("functionjobs", ns, "nightly", {"payload": {"a": 2}})
    time.sleep(2)
    assert run_jobs() == [first]
    # an older one neither
    kube.patch_spec("functionjobs", ns, "nightly", {"run_id": 0})
    time.sleep(1)
    assert run_jobs() == [first]
    # a new one runs once
    kube.patch_spec("functionjobs", ns, "nightly", {"run_id": 2})
    wait_for("second run", lambda: len(run_jobs()) == 2)
    wait_for(
        "second run recorded", lambda: kube.status("functionjobs", ns, "nightly")["run_id"] == 2
    )
    time.sleep(1)
    assert run_jobs() == sorted([first, labels.function_job_name("nightly", 2)])


def test_delete_removes_everything_it_created(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns, name = tenant, "gone"
    _status, sha = deploy_function(kube, s3, op_settings, ns, name, {"egress": ["10.0.0.0/8:5432"]})
    assert kube.net.read_namespaced_network_policy(f"fn-{name}-egress", ns)
    kube.delete("functions", ns, name)
    wait_for("function gone", lambda: missing(lambda: kube.get("functions", ns, name)))
    assert missing(lambda: kube.apps.read_namespaced_deployment(f"fn-{name}", ns))
    assert missing(lambda: kube.core.read_namespaced_service(f"fn-{name}", ns))
    assert missing(lambda: kube.net.read_namespaced_network_policy(f"fn-{name}-egress", ns))
    job_name = labels.build_job_name(ns, name, sha)
    assert missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert f"code/{sha}.zip" not in keys
    assert f"code/contexts/{sha}-python3.11.tar.gz" not in keys


def test_a_traffic_split_gives_each_version_its_own_deployment(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    """What the gateway writes for ``traffic: [v1 90, v2 10]``: the current spec (v2) and
    ``revisions`` (v1's spec). The operator renders one Deployment, Service and egress
    policy per version, with disjoint selectors, and builds nothing twice."""
    ns, name = tenant, "split"
    one = {**upload(s3, op_settings, {**HANDLER, "v.txt": "1"}), "version": "v1"}
    v1 = FunctionSpec.model_validate({"env": {"V": "1"}, "code": one}).model_dump(mode="json")
    kube.create("functions", ns, name, v1)
    # as the gateway does: the versions its code gate lets serve, before the operator builds
    kube.patch_status("functions", ns, name, {"phase": "Pending", "allowedVersions": ["v1"]})
    job_one = labels.build_job_name(ns, name, one["sha256"])
    wait_for(
        "build 1", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_one, BUILDS))
    )
    kube.finish_job(BUILDS, job_one, DIGEST)
    kube.wait_phase("functions", ns, name, "Ready")

    two = {**upload(s3, op_settings, {**HANDLER, "v.txt": "2"}), "version": "v2"}
    v2 = FunctionSpec.model_validate(
        {
            "env": {"V": "2"},
            "egress": ["10.0.0.0/8:5432"],
            "code": two,
            "traffic": [{"version": "v1", "percent": 90}, {"version": "v2", "percent": 10}],
        }
    ).model_dump(mode="json")
    kube.patch_status("functions", ns, name, {"allowedVersions": ["v1", "v2"]})
    kube.patch_spec("functions", ns, name, {**v2, "revisions": {"v1": v1}})
    kube.patch_status("functions", ns, name, {"phase": "Pending"})
    job_two = labels.build_job_name(ns, name, two["sha256"])
    wait_for(
        "build 2", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_two, BUILDS))
    )
    kube.finish_job(BUILDS, job_two, DIGEST)
    status = wait_for(
        "both versions serving",
        lambda: (
            (s := kube.status("functions", ns, name)).get("phase") == "Ready"
            and s.get("servingRevisions")
            and s
        ),
    )
    assert status["servingSpec"]["code"]["version"] == "v2"
    assert list(status["servingRevisions"]) == ["v1"]
    assert status["servingRevisions"]["v1"]["code"]["sha256"] == one["sha256"]
    # v1's build was reused: one Job per sha256, never a second one
    jobs = kube.batch.list_namespaced_job(BUILDS, label_selector=f"{labels.FUNCTION}={name}")
    assert sorted(j.metadata.name for j in jobs.items) == sorted([job_one, job_two])

    current = kube.apps.read_namespaced_deployment(f"fn-{name}", ns)
    other = kube.apps.read_namespaced_deployment(f"fn-{name}-v1", ns)
    sha = "sless.kube5s.ru/sha256"
    assert current.spec.template.metadata.annotations[sha] == two["sha256"]
    assert other.spec.template.metadata.annotations[sha] == one["sha256"]
    assert other.spec.selector.match_labels == labels.track_selector(name, "v1")
    assert other.spec.template.metadata.labels[labels.TRACK] == "v1"
    assert current.spec.template.metadata.labels[labels.TRACK] == labels.CURRENT_TRACK
    env = {e.name: e.value for e in other.spec.template.spec.containers[0].env}
    assert env["V"] == "1"
    assert other.metadata.owner_references[0].kind == "Function"
    service = kube.core.read_namespaced_service(f"fn-{name}-v1", ns)
    assert service.spec.selector == labels.track_selector(name, "v1")
    current_service = kube.core.read_namespaced_service(f"fn-{name}", ns)
    assert current_service.spec.selector == labels.track_selector(name, labels.CURRENT_TRACK)
    # the egress allowlist is v2's only: v1 has none, so no policy selects its pods
    policy = kube.net.read_namespaced_network_policy(f"fn-{name}-egress", ns)
    assert policy.spec.pod_selector.match_labels[labels.TRACK] == labels.CURRENT_TRACK
    assert missing(lambda: kube.net.read_namespaced_network_policy(f"fn-{name}-v1-egress", ns))
    # the rendered pods pass the allowlist
    template = kube.api.sanitize_for_serialization(other.spec.template)
    assert (
        policies.check_pod_spec(template["spec"], runtime_class="gvisor", require_digest=True) == []
    )

    # a disabled http trigger scales every version's Deployment to 0, and back
    def replicas() -> tuple[int, int]:
        read = kube.apps.read_namespaced_deployment
        return read(f"fn-{name}", ns).spec.replicas, read(f"fn-{name}-v1", ns).spec.replicas

    kube.create("triggers", ns, "split-web", {"type": "http", "function": name, "enabled": False})
    wait_for("both scaled to 0", lambda: replicas() == (0, 0))
    kube.patch_spec("triggers", ns, "split-web", {"enabled": True})
    wait_for("both scaled back to 1", lambda: replicas() == (1, 1))
    kube.delete("triggers", ns, "split-web")

    # the split removed (e.g. the canary promoted): v1's objects go
    kube.patch_spec("functions", ns, name, {"traffic": [], "revisions": None})
    wait_for(
        "v1's Deployment removed",
        lambda: missing(lambda: kube.apps.read_namespaced_deployment(f"fn-{name}-v1", ns)),
    )
    assert missing(lambda: kube.core.read_namespaced_service(f"fn-{name}-v1", ns))
    wait_for("no revisions", lambda: not kube.status("functions", ns, name).get("servingRevisions"))
    kube.delete("functions", ns, name)
    wait_for("function gone", lambda: missing(lambda: kube.get("functions", ns, name)))
    assert missing(lambda: kube.apps.read_namespaced_deployment(f"fn-{name}", ns))


def test_blob_shared_with_another_function_is_kept(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    ns = tenant
    code = upload(s3, op_settings, {**HANDLER, "shared.txt": "1"})
    body = FunctionSpec.model_validate({"code": code}).model_dump(mode="json")
    kube.create("functions", ns, "share-a", body)
    kube.create("functions", ns, "share-b", body)
    wait_for(
        "both building",
        lambda: all(
            kube.status("functions", ns, n).get("phase") == "Building"
            for n in ("share-a", "share-b")
        ),
    )
    kube.delete("functions", ns, "share-a")
    wait_for("a gone", lambda: missing(lambda: kube.get("functions", ns, "share-a")))
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert code["blob_key"] in keys
    kube.delete("functions", ns, "share-b")
    wait_for("b gone", lambda: missing(lambda: kube.get("functions", ns, "share-b")))
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert code["blob_key"] not in keys


def test_restart_mid_build_converges(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str, operator: RunningOperator
) -> None:
    ns, name = tenant, "restart"
    code = upload(s3, op_settings, {**HANDLER, "r.txt": "restart"})
    kube.create(
        "functions", ns, name, FunctionSpec.model_validate({"code": code}).model_dump(mode="json")
    )
    job_name = labels.build_job_name(ns, name, code["sha256"])
    wait_for(
        "build job", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_name, BUILDS))
    )
    kube.wait_phase("functions", ns, name, "Building")
    operator.stop()
    try:
        # while it is down: the build finishes, and a FunctionJob is created
        kube.finish_job(BUILDS, job_name, DIGEST)
        wait_for(
            "job complete",
            lambda: (kube.batch.read_namespaced_job(job_name, BUILDS).status.succeeded or 0) == 1,
        )
        assert kube.status("functions", ns, name)["phase"] == "Building"
    finally:
        operator.start()
    status = kube.wait_phase("functions", ns, name, "Ready")
    assert status["image"] == f"{REGISTRY}/{ns}-{name}@{DIGEST}"
    # exactly one build Job, one Deployment
    jobs = kube.batch.list_namespaced_job(
        BUILDS, label_selector=f"sless.kube5s.ru/function={name},sless.kube5s.ru/namespace={ns}"
    ).items
    assert [j.metadata.name for j in jobs] == [job_name]
    assert (
        kube.apps.read_namespaced_deployment(f"fn-{name}", ns)
        .spec.template.spec.containers[0]
        .image
        == status["image"]
    )
    # a second restart changes nothing
    before = kube.get("functions", ns, name)["metadata"]["resourceVersion"]
    deployment_version = kube.apps.read_namespaced_deployment(
        f"fn-{name}", ns
    ).metadata.resource_version
    operator.stop()
    operator.start()
    time.sleep(2)
    assert (
        kube.apps.read_namespaced_deployment(f"fn-{name}", ns).metadata.resource_version
        == deployment_version
    )
    assert kube.status("functions", ns, name)["phase"] == "Ready"
    assert before


def test_held_code_is_not_built_after_a_put(
    kube: Kube, s3: Any, op_settings: Settings, tenant: str
) -> None:
    """Issue 26: v1 serves, v2 is held for review. A spec write naming v2 (even with the
    phase put back to Pending, as the old release-by-PUT did) builds nothing: the operator
    asks the gateway's ``allowedVersions``. A later allowed v3 is built, which proves the
    operator handled the held write before it (one object's events are handled in order)."""
    ns, name = tenant, "gated"
    one = {**upload(s3, op_settings, {**HANDLER, "g.txt": "1"}), "version": "v1"}
    kube.create(
        "functions", ns, name, FunctionSpec.model_validate({"code": one}).model_dump(mode="json")
    )
    kube.patch_status("functions", ns, name, {"phase": "Pending", "allowedVersions": ["v1"]})
    job_one = labels.build_job_name(ns, name, one["sha256"])
    wait_for(
        "build 1", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_one, BUILDS))
    )
    kube.finish_job(BUILDS, job_one, DIGEST)
    kube.wait_phase("functions", ns, name, "Ready")

    held = {**upload(s3, op_settings, {**HANDLER, "g.txt": "held"}), "version": "v2"}
    kube.patch_status("functions", ns, name, {"phase": "Validating"})
    kube.patch_spec("functions", ns, name, {"code": held, "env": {"PUT": "1"}})
    kube.patch_status("functions", ns, name, {"phase": "Pending"})

    three = {**upload(s3, op_settings, {**HANDLER, "g.txt": "3"}), "version": "v3"}
    kube.patch_status("functions", ns, name, {"allowedVersions": ["v1", "v3"]})
    kube.patch_spec("functions", ns, name, {"code": three, "env": {"PUT": "2"}})
    kube.patch_status("functions", ns, name, {"phase": "Pending"})
    job_three = labels.build_job_name(ns, name, three["sha256"])
    wait_for(
        "build 3", lambda: not missing(lambda: kube.batch.read_namespaced_job(job_three, BUILDS))
    )
    kube.finish_job(BUILDS, job_three, DIGEST)
    status = wait_for(
        "v3 serving",
        lambda: (
            (s := kube.status("functions", ns, name)).get("observed_sha256") == three["sha256"]
            and s
        ),
    )
    assert held["sha256"] not in status.get("builds", {})
    job_held = labels.build_job_name(ns, name, held["sha256"])
    assert missing(lambda: kube.batch.read_namespaced_job(job_held, BUILDS))

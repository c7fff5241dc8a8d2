"""Functions on the real node, through the gateway's HTTP API only, as a tenant would: the
upload is built by a kaniko Job in sless-builds, the Deployment pins the pushed digest, the
pod runs under gVisor (the function itself reports gVisor's kernel release), the call
through /fn/ answers 200 and is recorded in PostgreSQL. The Python function names a tenant
secret: the pod reads it as its variable and as the file /run/secrets/<name> (it answers
only their digests, so the value is in no answer or log)."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client

from sless.config import Settings
from tests.node.stack import Gateway, call, deploy, onboard
from tests.node.support import wait_for

GROUP, VERSION = "sless.kube5s.ru", "v1"

PYTHON = {
    "handler.py": (
        "import hashlib, os\n"
        "def digest(text):\n"
        "    return hashlib.sha256(text.encode()).hexdigest() if text is not None else None\n"
        "def handle(event, context):\n"
        "    mounted, error = None, None\n"
        "    try:\n"
        "        with open('/run/secrets/dbpass') as f:\n"
        "            mounted = f.read()\n"
        "    except OSError as e:  # the answer says why (the test shows it)\n"
        "        error = type(e).__name__ + ': ' + str(e.strerror)\n"
        "    return {'lang': 'python', 'release': os.uname().release,\n"
        "            'version': open('/proc/version').read().strip(),\n"
        "            'secret_env': digest(os.environ.get('DB_PASSWORD')),\n"
        "            'secret_file': digest(mounted), 'secret_error': error}\n"
    )
}
SECRET_VALUE = "node-secret-" + uuid.uuid4().hex
NODE = {
    "handler.js": (
        "const os = require('os');\n"
        "const fs = require('fs');\n"
        "exports.handle = async (event, context) => ({\n"
        "  lang: 'node', release: os.release(),\n"
        "  version: fs.readFileSync('/proc/version', 'utf8').trim() });\n"
    )
}

# the node's first build pulls and unpacks images: minutes, not the default 120 s
pytestmark = pytest.mark.timeout(900)


def test_python_and_node_functions_build_run_under_gvisor_and_answer(
    stack: tuple[Gateway, Settings], api: Any
) -> None:
    gateway, _ = stack
    host_release = Path("/proc/sys/kernel/osrelease").read_text().strip()
    tenant = "acme" + uuid.uuid4().hex[:6]
    ns = f"sless-{tenant}"
    with onboard(gateway, tenant) as acme:
        try:
            _deploy_and_call(gateway, api, acme, ns, host_release)
        finally:
            # the node has 2 CPUs: leave them to the next test
            for name in ("pyhello", "jshello"):
                acme.delete(f"/v1/namespaces/{ns}/functions/{name}")


def _deploy_and_call(
    gateway: Gateway, api: Any, acme: httpx.Client, ns: str, host_release: str
) -> None:
    wait_for("the tenant namespace", lambda: acme.get("/v1/whoami").status_code == 200)
    stored = acme.put(f"/v1/namespaces/{ns}/secrets/dbpass", json={"value": SECRET_VALUE})
    assert stored.status_code == 201, stored.text
    secret_spec = {"secrets": [{"name": "dbpass", "env": "DB_PASSWORD"}]}
    for name, runtime, files, lang, spec in (
        ("pyhello", "python3.11", PYTHON, "python", secret_spec),
        ("jshello", "nodejs20", NODE, "node", {}),
    ):
        deploy(acme, ns, name, runtime, files, **spec)
        deployment = client.AppsV1Api(api).read_namespaced_deployment(f"fn-{name}", ns)
        pod_spec = deployment.spec.template.spec
        assert pod_spec.runtime_class_name == "gvisor"
        assert "@sha256:" in pod_spec.containers[0].image, pod_spec.containers[0].image
        answer = wait_for(f"{name}'s pod ready", lambda n=name: call(gateway, ns, n), every_s=1)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["lang"] == lang
        # from inside the pod: gVisor's kernel, not the machine's
        assert body["release"].endswith("-gvisor"), body
        assert host_release not in body["version"], body
        if spec:
            expected = hashlib.sha256(SECRET_VALUE.encode()).hexdigest()
            assert body["secret_env"] == expected, body
            assert body["secret_error"] is None, body
            assert body["secret_file"] == expected, body

        def recorded(name: str = name) -> list[dict[str, Any]]:
            history = acme.get(f"/v1/namespaces/{ns}/invocations", params={"function": name})
            assert history.status_code == 200, history.text
            return history.json()["invocations"]

        # the gateway records invocations in PostgreSQL in the background, in batches
        # (the calls answered 503 while the pod was starting are recorded too)
        invocations = wait_for(f"{name}'s invocations in PostgreSQL", recorded, timeout_s=60)
        assert {i["function"] for i in invocations} == {name}, invocations


HOG = {
    "handler.py": (
        "def handle(event, context):\n"
        "    if event['body'] != {'hog': True}:  # the upload's detonation: a quiet run\n"
        "        return 'fine'\n"
        "    hoard = []\n"
        "    while True:  # 16 MiB at a time, each page written: far past the 128 MiB limit\n"
        "        hoard.append(b'x' * (16 << 20))\n"
    )
}


def test_a_pod_killed_for_memory_mid_call_is_named_to_the_caller(
    stack: tuple[Gateway, Settings], api: Any
) -> None:
    """The function's container is OOMKilled during the call: the caller is told so with
    the function's limit, in embedded mode's words, not just that the connection broke."""
    gateway, _ = stack
    tenant = "oom" + uuid.uuid4().hex[:6]
    ns = f"sless-{tenant}"
    with onboard(gateway, tenant) as acme:
        try:
            wait_for("the tenant namespace", lambda: acme.get("/v1/whoami").status_code == 200)
            deploy(acme, ns, "hog", "python3.11", HOG, memory_mb=128)
            wait_for("hog's pod ready", lambda: call(gateway, ns, "hog"), every_s=1)
            answer = httpx.post(f"{gateway.url}/fn/{ns}/hog", json={"hog": True}, timeout=300)
            assert answer.status_code >= 500, answer.text
            message = answer.json()["error"]["message"]
            assert "out of memory (128 MiB limit)" in message, answer.text
            pod = client.CoreV1Api(api).list_namespaced_pod(ns).items[0]
            [status] = pod.status.container_statuses
            ended = status.last_state.terminated or status.state.terminated
            assert ended is not None, status
            assert ended.reason == "OOMKilled", status
        finally:
            acme.delete(f"/v1/namespaces/{ns}/functions/hog")

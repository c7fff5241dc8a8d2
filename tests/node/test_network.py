"""NetworkPolicy holds on the real node (kube-router enforces it with iptables and ipset).

Two tenants onboarded through the gateway; the operator made their namespaces and policies
(default deny, ingress from the gateway only, DNS). A probe pod in tenant A's namespace,
under gVisor, labelled as the serving pod of A's function ``prober``, tries TCP connections
and prints what it got. The same probe in a namespace without policies reaches every target,
so each refusal is the policy's doing and not a missing route.

Targets: B's pod, B's Service, the API server (node address and Service IP), the metadata
address (a listener on 169.254.169.254 inside the node's network namespace), and two test
hosts, each a network namespace the test made, joined by a veth pair: an egress rule of the
function allows exactly the first.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kubernetes import client

from sless import policies
from sless.config import Settings
from tests.netns import netns_host
from tests.node.stack import Gateway, onboard
from tests.node.support import NODE_IP, RESTRICTED_CONTAINER, Node, wait_for

#: the node's pod network (tools/kube-testenv/node.bash): the test hosts route it back
POD_CIDR = "10.88.0.0/16"

# ``--settle HOST:PORT`` first: a pod's policies take effect once kube-router has seen the
# pod, a moment after it starts; the probe waits (at most 60 s) until that target, which
# a policy refuses, stops answering, then tries every target once
PROBE = r"""
import json, socket, sys, time
def dns_query(resolver, timeout):
    # one A query for kubernetes.default.svc.cluster.local, straight to RESOLVER:53 (UDP)
    labels = b'kubernetes.default.svc.cluster.local'.split(b'.')
    name = b''.join(bytes([len(p)]) + p for p in labels)
    query = b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00' + name + b'\x00\x00\x01\x00\x01'
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(query, (resolver, 53))
        return 'answered' if s.recv(512)[:2] == b'\x12\x34' else 'garbled'
    finally:
        s.close()
def attempt(target, timeout=3):
    kind, _, rest = target.partition('=')
    try:
        if kind == 'resolve':  # through the pod's resolv.conf: the cluster DNS
            return 'resolved ' + socket.gethostbyname(rest)
        if kind == 'dns':
            return dns_query(rest, timeout)
    except OSError as e:
        return type(e).__name__
    host, port = target.rsplit(':', 1)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
        return 'open'
    except OSError as e:
        return type(e).__name__
targets, settled = sys.argv[1:], None
if targets[:1] == ['--settle']:
    sentinel, targets, start = targets[1], targets[2:], time.monotonic()
    while attempt(sentinel, 1) == 'open' and time.monotonic() - start < 60:
        time.sleep(0.5)
    settled = round(time.monotonic() - start, 2)
print('SETTLED ' + json.dumps(settled))
print('RESULT ' + json.dumps({target: attempt(target) for target in targets}))
"""
METADATA = "169.254.169.254"
ALLOWED_HOST, OTHER_HOST = "10.202.0.2", "10.203.0.2"
TEST_PORT = 8081

# the node's first build pulls and unpacks images: minutes, not the default 120 s
pytestmark = pytest.mark.timeout(900)


def _pod(node: Node, name: str, labels: dict[str, str], args: list[str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "runtimeClassName": "gvisor",
            "restartPolicy": "Never" if args[:1] == ["-c"] else "Always",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [
                {
                    "name": "main",
                    "image": node.runtime_image("python3.11"),
                    "command": ["python3", *args],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
                    "securityContext": RESTRICTED_CONTAINER,
                    "resources": {"limits": {"cpu": "250m", "memory": "128Mi"}},
                }
            ],
        },
    }


def _server_pod(api: Any, node: Node, ns: str, name: str) -> str:
    """A pod serving HTTP on 8080 with a function's labels; returns its IP once Ready."""
    core = client.CoreV1Api(api)
    labels = policies.labels.function_labels(name)
    core.create_namespaced_pod(
        ns, _pod(node, name, labels, ["-m", "http.server", "8080", "--directory", "/runtime"])
    )

    def ip() -> str | None:
        pod = core.read_namespaced_pod(name, ns)
        ready = any(c.ready for c in pod.status.container_statuses or [])
        return pod.status.pod_ip if ready else None

    return wait_for(f"pod {ns}/{name} ready", ip)


def _probe(
    api: Any,
    node: Node,
    ns: str,
    labels: dict[str, str],
    targets: list[str],
    *,
    settle: str | None = None,
) -> dict:
    """What a pod with ``labels`` in ``ns`` reaches; ``settle``: a target its policies
    refuse, awaited first (see PROBE)."""
    core = client.CoreV1Api(api)
    name = "probe-" + uuid.uuid4().hex[:6]
    args = ["-c", PROBE, *(["--settle", settle] if settle else []), *targets]
    core.create_namespaced_pod(ns, _pod(node, name, labels, args))

    def done() -> str | None:
        phase = core.read_namespaced_pod(name, ns).status.phase
        return phase if phase in ("Succeeded", "Failed") else None

    phase = wait_for(f"probe {ns}/{name}", done)
    logs = core.read_namespaced_pod_log(name, ns)
    assert phase == "Succeeded", logs
    line = next(x for x in logs.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


@contextlib.contextmanager
def metadata_listener() -> Iterator[str]:
    """An HTTP server on the metadata address, inside the node's network namespace."""
    subprocess.run(["ip", "addr", "add", f"{METADATA}/32", "dev", "lo"], check=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "80", "--bind", METADATA],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"{METADATA}:80"
    finally:
        server.terminate()
        server.wait(10)
        subprocess.run(["ip", "addr", "del", f"{METADATA}/32", "dev", "lo"], check=False)


def test_tenant_pods_reach_only_what_their_policies_allow(
    stack: tuple[Gateway, Settings], api: Any, node: Node
) -> None:
    gateway, settings = stack
    suffix = uuid.uuid4().hex[:6]
    onboard(gateway, f"neta{suffix}").close()
    onboard(gateway, f"netb{suffix}").close()
    a, b = f"sless-neta{suffix}", f"sless-netb{suffix}"
    core = client.CoreV1Api(api)
    net = client.NetworkingV1Api(api)
    wait_for("tenant policies", lambda: len(net.list_namespaced_network_policy(b).items) >= 3)
    wait_for("service accounts", lambda: core.list_namespaced_service_account(a).items)
    wait_for("service accounts", lambda: core.list_namespaced_service_account(b).items)

    b_ip = _server_pod(api, node, b, "target")
    core.create_namespaced_service(
        b,
        {
            "metadata": {"name": "target"},
            "spec": {
                "selector": policies.labels.function_selector("target"),
                "ports": [{"name": "http", "port": 8080, "targetPort": 8080}],
            },
        },
    )
    b_service = core.read_namespaced_service("target", b).spec.cluster_ip
    api_port = node.server.rsplit(":", 1)[1]

    # the function `prober` of tenant A may reach the allowed test host, nothing else
    net.create_namespaced_network_policy(
        a,
        policies.function_egress_policy(
            a,
            "prober",
            [f"{ALLOWED_HOST}:{TEST_PORT}"],
            settings.kubernetes.api_server_cidrs,
            # the provider allows its tenants the allowed test host's network, no other
            private_allowed=[ipaddress.ip_network(f"{ALLOWED_HOST}/32")],
        ),
    )
    control_ns = "node-control-" + uuid.uuid4().hex[:4]
    core.create_namespace({"metadata": {"name": control_ns}})
    wait_for("service accounts", lambda: core.list_namespaced_service_account(control_ns).items)
    server = [sys.executable, "-m", "http.server", str(TEST_PORT)]
    try:
        with (
            metadata_listener() as metadata,
            netns_host("10.202.0.1", ALLOWED_HOST, TEST_PORT, server, route_back=POD_CIDR),
            netns_host("10.203.0.1", OTHER_HOST, TEST_PORT, server, route_back=POD_CIDR),
        ):
            targets = {
                "tenant B's pod": f"{b_ip}:8080",
                "tenant B's Service": f"{b_service}:8080",
                "the API server (node address)": f"{NODE_IP}:{api_port}",
                "the API server (Service kubernetes)": "10.96.0.1:443",
                "the metadata address": metadata,
                "the allowed test host": f"{ALLOWED_HOST}:{TEST_PORT}",
                "another test host": f"{OTHER_HOST}:{TEST_PORT}",
            }
            # the pods of the current version, as the operator labels them
            labels = {
                **policies.labels.function_labels("prober"),
                policies.labels.TRACK: policies.labels.CURRENT_TRACK,
            }
            control = _probe(api, node, control_ns, labels, list(targets.values()))
            from_a = _probe(
                api, node, a, labels, list(targets.values()), settle=targets["another test host"]
            )
    finally:
        # the node has 2 CPUs: leave them to the next test
        for ns in (control_ns, a, b):
            core.delete_namespace(ns)
    # Without policies of its own a pod reaches every target except B's pod and Service,
    # which B's ingress policy (from the gateway only) guards; the node, where the gateway
    # runs here, reaches B's pod. So each refusal below is a policy's doing.
    ingress_guarded = {targets["tenant B's pod"], targets["tenant B's Service"]}
    assert all(v == "open" for t, v in control.items() if t not in ingress_guarded), json.dumps(
        control
    )
    assert all(control[t] != "open" for t in ingress_guarded), control
    # (the node's netns has no route to Service IPs for its own sockets: B's pod only)
    socket.create_connection((b_ip, 8080), timeout=5).close()
    got = {what: from_a[target] for what, target in targets.items()}
    assert got.pop("the allowed test host") == "open", got
    assert all(v != "open" for v in got.values()), got


@contextlib.contextmanager
def rogue_resolver() -> Iterator[str]:
    """A resolver that is not the cluster's: UDP and TCP 53 on the node address (inside the
    node's network namespace), answering any query with the query itself. Its threads poll
    and are joined before the sockets close, so port 53 is free again afterwards."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp = socket.socket()
    for sock in (udp, tcp):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((NODE_IP, 53))
        sock.settimeout(0.2)
    tcp.listen(16)
    stop = threading.Event()

    def answer_udp() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                data, peer = udp.recvfrom(512)
                udp.sendto(data, peer)

    def accept_tcp() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                tcp.accept()[0].close()

    threads = [threading.Thread(target=t, daemon=True) for t in (answer_udp, accept_tcp)]
    for thread in threads:
        thread.start()
    try:
        yield NODE_IP
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        udp.close()
        tcp.close()


def test_a_tenant_pod_resolves_names_through_the_cluster_dns_and_nothing_else(
    stack: tuple[Gateway, Settings], api: Any, node: Node
) -> None:
    """The tenant's sless-allow-dns at work: a function pod resolves Service names through
    the cluster's CoreDNS (kube-system/kube-dns), but reaches no other resolver, and a
    name resolved is no way in: tenant B's Service refuses A by name as by address. The
    same probe in a namespace without policies reaches the rogue resolver, B's Service by
    name and the CoreDNS pod's other port: each refusal is a policy's."""
    gateway, _ = stack
    suffix = uuid.uuid4().hex[:6]
    onboard(gateway, f"dnsa{suffix}").close()
    onboard(gateway, f"dnsb{suffix}").close()
    a, b = f"sless-dnsa{suffix}", f"sless-dnsb{suffix}"
    core = client.CoreV1Api(api)
    net = client.NetworkingV1Api(api)
    wait_for("tenant policies", lambda: len(net.list_namespaced_network_policy(a).items) >= 3)
    wait_for("tenant policies", lambda: len(net.list_namespaced_network_policy(b).items) >= 3)
    wait_for("service accounts", lambda: core.list_namespaced_service_account(a).items)
    wait_for("service accounts", lambda: core.list_namespaced_service_account(b).items)
    [dns_pod] = core.list_namespaced_pod("kube-system", label_selector="k8s-app=kube-dns").items
    _server_pod(api, node, b, "target")
    control_ns = "node-dns-control-" + uuid.uuid4().hex[:4]
    core.create_namespace({"metadata": {"name": control_ns}})
    wait_for("service accounts", lambda: core.list_namespaced_service_account(control_ns).items)
    try:
        core.create_namespaced_service(
            b,
            {
                "metadata": {"name": "target"},
                "spec": {
                    "selector": policies.labels.function_selector("target"),
                    "ports": [{"name": "http", "port": 8080, "targetPort": 8080}],
                },
            },
        )
        # a Service of B's that no ingress policy guards (no function labels): open to
        # the control pod, so A's refusal below is A's egress policy
        core.create_namespaced_service(
            control_ns,
            {
                "metadata": {"name": "open"},
                "spec": {
                    "selector": {"sless-test": "open"},
                    "ports": [{"name": "http", "port": 8080, "targetPort": 8080}],
                },
            },
        )
        open_pod = _pod(
            node,
            "open",
            {"sless-test": "open"},
            ["-m", "http.server", "8080", "--directory", "/runtime"],
        )
        core.create_namespaced_pod(control_ns, open_pod)

        def open_ready() -> bool:
            statuses = core.read_namespaced_pod("open", control_ns).status.container_statuses
            return any(c.ready for c in statuses or [])

        wait_for("the open pod ready", open_ready)
        b_service = core.read_namespaced_service("target", b).spec.cluster_ip
        open_service = core.read_namespaced_service("open", control_ns).spec.cluster_ip
        with rogue_resolver() as rogue:
            targets = {
                "the API server's Service by name": "resolve=kubernetes.default.svc.cluster.local",
                "B's Service by its short name": f"resolve=target.{b}",
                "a query to the cluster DNS Service": "dns=10.96.0.10",
                "a query to the CoreDNS pod": f"dns={dns_pod.status.pod_ip}",
                "a query to another resolver": f"dns={rogue}",
                "TCP 53 of another resolver": f"{rogue}:53",
                "the CoreDNS pod's health port": f"{dns_pod.status.pod_ip}:8080",
                "B's Service by name": f"target.{b}.svc.cluster.local:8080",
                "B's Service by address": f"{b_service}:8080",
                "an unguarded Service by name": f"open.{control_ns}.svc:8080",
                "an unguarded Service by address": f"{open_service}:8080",
            }
            labels = {
                **policies.labels.function_labels("prober"),
                policies.labels.TRACK: policies.labels.CURRENT_TRACK,
            }
            control = _probe(api, node, control_ns, labels, list(targets.values()))
            from_a = _probe(api, node, a, labels, list(targets.values()), settle=f"{rogue}:53")
    finally:
        for ns in (control_ns, a, b):
            core.delete_namespace(ns)
    seen = {what: (control[t], from_a[t]) for what, t in targets.items()}
    resolved = {
        "the API server's Service by name": "resolved 10.96.0.1",
        "B's Service by its short name": f"resolved {b_service}",
    }
    for what, answer in resolved.items():
        assert seen.pop(what) == (answer, answer), (what, json.dumps(control), json.dumps(from_a))
    for what in ("a query to the cluster DNS Service", "a query to the CoreDNS pod"):
        assert seen.pop(what) == ("answered", "answered"), (what, seen)
    # B's Service guards itself (ingress from the gateway only): refused to both
    for what in ("B's Service by name", "B's Service by address"):
        assert "open" not in seen.pop(what), (what, seen)
    # everything else: reached without policies, refused to the tenant's pod
    for what, (without, with_policies) in seen.items():
        assert without in ("open", "answered"), (what, without, json.dumps(control))
        assert with_policies not in ("open", "answered"), (what, with_policies, json.dumps(from_a))


def test_a_build_pod_reaches_the_registry_and_s3_and_nothing_else(
    stack: tuple[Gateway, Settings], api: Any, node: Node
) -> None:
    """sless-builds' policies (the operator applies them on start): a pod there, as kaniko
    runs (gVisor), reaches the registry and S3 (build_egress) and the cluster DNS, but not
    the API server (on the registry's own address, and by its Service), the metadata
    address or another resolver. The same probe in a namespace without policies reaches
    them all: each refusal is the policies' doing."""
    _, settings = stack
    k = settings.kubernetes
    core = client.CoreV1Api(api)
    net = client.NetworkingV1Api(api)
    names = {p.metadata.name for p in net.list_namespaced_network_policy(k.builds_namespace).items}
    assert {"sless-default-deny", "sless-allow-dns", "sless-allow-build-egress"} <= names, names
    s3 = httpx.URL(settings.s3.endpoint_url or "")
    api_port = node.server.rsplit(":", 1)[1]
    control_ns = "node-build-control-" + uuid.uuid4().hex[:4]
    core.create_namespace({"metadata": {"name": control_ns}})
    wait_for("service accounts", lambda: core.list_namespaced_service_account(control_ns).items)
    try:
        with metadata_listener() as metadata, rogue_resolver() as rogue:
            targets = {
                "the registry": f"{NODE_IP}:5000",
                "S3": f"{s3.host}:{s3.port}",
                "a query to the cluster DNS": "dns=10.96.0.10",
                "the API server (node address)": f"{NODE_IP}:{api_port}",
                "the API server (Service kubernetes)": "10.96.0.1:443",
                "the metadata address": metadata,
                "another resolver": f"dns={rogue}",
            }
            labels = {"sless-test": "build-probe"}
            control = _probe(api, node, control_ns, labels, list(targets.values()))
            from_builds = _probe(
                api, node, k.builds_namespace, labels, list(targets.values()), settle=metadata
            )
    finally:
        core.delete_namespace(control_ns)
    assert all(v in ("open", "answered") for v in control.values()), json.dumps(control)
    got = {what: from_builds[target] for what, target in targets.items()}
    for allowed in ("the registry", "S3"):
        assert got.pop(allowed) == "open", (allowed, got)
    assert got.pop("a query to the cluster DNS") == "answered", got
    assert all(v not in ("open", "answered") for v in got.values()), got

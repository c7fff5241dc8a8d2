"""The node tier: a real single-node cluster (`scripts/kube-testenv start --node DIR`), pods
under gVisor, NetworkPolicy enforced by kube-router.

``stack`` (the operator and gateway in-process, S3, a database) lives per module: the
install test (test_install.py) runs the platform from deploy/ instead, with no other
operator beside it.

These tests run inside the node's network namespace: `scripts/test --node` starts the node and
runs pytest through `scripts/kube-testenv exec DIR`, which sets SLESS_NODE_DIR. Without it
(the default suite) nothing here is collected: the node needs `scripts/kube-testenv build
--node` (tens of minutes cold) and root.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.node.support import Node

if TYPE_CHECKING:
    from sless.config import Settings
    from tests.node.stack import Gateway

if not os.environ.get("SLESS_NODE_DIR"):
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def node() -> Node:
    d = Path(os.environ["SLESS_NODE_DIR"]).resolve()
    assert (d / "node.env").exists(), f"{d}: no node (kube-testenv start --node)"
    token = (d / "pki" / "tokens.csv").read_text().splitlines()[0].split(",", 1)[0]
    server = re.search(r"server: (\S+)", (d / "kubeconfig").read_text())
    assert server
    return Node(dir=d, server=server.group(1), token=token, ca_file=d / "pki" / "ca.crt")


@pytest.fixture(scope="session")
def api(node: Node) -> Iterator[Any]:
    client = node.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def stack(
    node: Node, api: Any, postgres: object, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Gateway, Settings]]:
    name = "n_" + uuid.uuid4().hex[:12]
    from tests.node.stack import running_platform

    postgres.psql(f"CREATE DATABASE {name};")  # type: ignore[attr-defined]
    base: str = postgres.get_uri()  # type: ignore[attr-defined]
    prefix, _, query = base.partition("?")
    database_url = f"{prefix.rsplit('/', 1)[0]}/{name}?{query}"
    with running_platform(node, api, database_url, tmp_path_factory.mktemp("data")) as running:
        yield running

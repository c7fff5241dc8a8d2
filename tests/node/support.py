"""Helpers of the node tests (tests/node/conftest.py has the fixtures)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NODE_IP = "10.201.0.1"
REGISTRY = f"{NODE_IP}:5000"


@dataclass(frozen=True)
class Node:
    dir: Path
    server: str
    token: str
    ca_file: Path

    def api_client(self) -> Any:
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.server
        cfg.ssl_ca_cert = str(self.ca_file)
        cfg.api_key = {"authorization": self.token}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(cfg)

    def runtime_image(self, runtime: str) -> str:
        return f"{REGISTRY}/sless/runtime-{runtime}:0.1.0"


def wait_for(
    what: str, check: Callable[[], Any], timeout_s: float = 180, every_s: float = 0.5
) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after the bound."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every_s)
    pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what} (last: {last!r})")


RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": 65534,
    "runAsGroup": 65534,
    "readOnlyRootFilesystem": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}

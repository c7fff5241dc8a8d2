"""The real test control plane (etcd + kube-apiserver + kube-controller-manager) for kube tests.

`scripts/kube-testenv build` must have run before pytest (it compiles Kubernetes from the Go
module proxy, which takes minutes cold); the fixture only starts and stops the processes. With
the binaries missing, kube tests are skipped locally and fail under CI.

Set SLESS_KUBE_TESTENV_DIR to reuse a control plane you started yourself
(`scripts/kube-testenv start DIR`): the fixture then neither starts a new one nor stops it.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "kube-testenv"
# Bounds for the fixture's own operations (the script's readiness wait is 120 s by default).
START_TIMEOUT_S = 240
STOP_TIMEOUT_S = 90
EXIT_NOT_BUILT = 3


@dataclass(frozen=True)
class KubeTestenv:
    """A running control plane: admin kubeconfig, API base URL, admin bearer token, CA file."""

    dir: Path
    kubeconfig: Path
    server: str
    token: str
    ca_file: Path
    controller_manager: bool

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def api_client(self) -> ApiClient:
        """A `kubernetes` client bound to this control plane (no global configuration touched)."""
        from kubernetes import client

        cfg = client.Configuration()
        cfg.host = self.server
        cfg.ssl_ca_cert = str(self.ca_file)
        cfg.api_key = {"authorization": self.token}
        cfg.api_key_prefix = {"authorization": "Bearer"}
        return client.ApiClient(cfg)


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _read_env(d: Path) -> KubeTestenv:
    ports = dict(
        line.split("=", 1) for line in (d / "ports.env").read_text().split() if "=" in line
    )
    token = (d / "pki" / "tokens.csv").read_text().splitlines()[0].split(",", 1)[0]
    kubeconfig = d / "kubeconfig"
    server = re.search(r"server: (\S+)", kubeconfig.read_text())
    assert server, f"no server in {kubeconfig}"
    kcm_pid = d / "kube-controller-manager.pid"
    return KubeTestenv(
        dir=d,
        kubeconfig=kubeconfig,
        server=server.group(1),
        token=token,
        ca_file=d / "pki" / "ca.crt",
        controller_manager=kcm_pid.exists() and ports.get("KCM_PORT") is not None,
    )


#: the start is tried again once after a failure (each try logs what failed)
_START_ATTEMPTS = 2


def _start(d: Path, attempt: int = 1) -> None:
    try:
        proc = subprocess.run(
            [str(SCRIPT), "start", "--no-build", str(d)],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        subprocess.run([str(SCRIPT), "stop", str(d)], timeout=STOP_TIMEOUT_S, check=False)
        pytest.fail(f"kube-testenv start did not finish in {START_TIMEOUT_S}s: {exc}")
    if proc.returncode == EXIT_NOT_BUILT:
        msg = f"kube-testenv not built: run `scripts/kube-testenv build` first\n{proc.stderr}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    if proc.returncode != 0 and attempt < _START_ATTEMPTS:
        # seen on the 2 shared cores: kube-controller-manager exiting at once with an empty
        # log while other test servers came and went; a second start, from clean, came up
        subprocess.run([str(SCRIPT), "stop", str(d)], timeout=STOP_TIMEOUT_S, check=False)
        _start(d, attempt + 1)
        return
    if proc.returncode != 0:
        pytest.fail(f"kube-testenv start failed ({proc.returncode}):\n{_tail(proc.stderr)}")


@pytest.fixture(scope="session")
def kube_testenv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeTestenv]:
    """Start the control plane once per session (in a tmp dir) and stop it at the end."""
    external = os.environ.get("SLESS_KUBE_TESTENV_DIR")
    if external:
        d = Path(external).resolve()
        _start(d)  # idempotent: returns at once when it is already running
        yield _read_env(d)
        return
    d = tmp_path_factory.mktemp("kube-testenv")
    _start(d)
    try:
        yield _read_env(d)
    finally:
        stop = subprocess.run(
            [str(SCRIPT), "stop", str(d)],
            capture_output=True,
            text=True,
            timeout=STOP_TIMEOUT_S,
            check=False,
        )
        assert stop.returncode == 0, f"kube-testenv stop failed:\n{_tail(stop.stderr)}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The session fixture starts inside the first test that uses it: give that test the
    start-up bound on top of its own timeout (pytest-timeout counts fixture setup)."""
    for item in items:
        if "kube_testenv" not in getattr(item, "fixturenames", ()):
            continue
        marker = item.get_closest_marker("timeout")
        if marker and marker.args:
            base = float(marker.args[0])
        else:
            base = float(config.getini("timeout") or 0)
        if base > 0:
            item.add_marker(pytest.mark.timeout(base + START_TIMEOUT_S))
        break

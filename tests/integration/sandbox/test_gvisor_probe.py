"""gVisor's availability probe leaves nothing mounted on the host, even when it is killed.

``runsc do`` binds the network namespace it makes at ``/tmp/runsc-do*/null-netns``. A
probe that hangs (KVM on a VM whose KVM cannot run a sandbox: ``auto`` tries it first
wherever ``/dev/kvm`` exists) is killed at its timeout, and that mount stayed in the
host's mount namespace, holding a network namespace, once per start of an isolation that
probes: six of them in one CI run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sless.sandbox import gvisor
from tests.integration.sandbox.harness import built_runsc

pytestmark = pytest.mark.integration


def _runsc_mounts() -> list[str]:
    lines = Path("/proc/self/mountinfo").read_text().splitlines()
    return [line.split()[4] for line in lines if "/runsc-do" in line.split()[4]]


def test_a_probe_killed_at_its_timeout_leaves_no_mount(monkeypatch: pytest.MonkeyPatch) -> None:
    runsc = built_runsc()
    if runsc is None:
        pytest.skip("runsc is not built on this machine (scripts/kube-testenv build)")
    if not Path("/dev/kvm").exists():
        pytest.skip("no /dev/kvm: the KVM probe fails at once instead of hanging")
    monkeypatch.setattr(gvisor, "_PROBE_TIMEOUT_S", 3.0)
    before = _runsc_mounts()
    ok, _ = gvisor._probe(runsc.runsc, "kvm")
    if ok:
        pytest.skip("KVM runs sandboxes on this machine: the probe did not hang")
    assert _runsc_mounts() == before

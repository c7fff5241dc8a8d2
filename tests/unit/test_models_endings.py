"""How a worker ended, in the words a tenant reads (sless.models.endings): pure."""

from __future__ import annotations

import signal

import pytest

from sless.models.endings import (
    MAX_REASON_CHARS,
    Ending,
    did_not_start,
    log_line,
    of_wait_status,
    response_too_large,
    size,
    timed_out,
    worker_ended,
)


@pytest.mark.parametrize(
    ("returncode", "sandboxed", "expected"),
    [
        (0, True, (0, None)),
        (3, True, (3, None)),
        (-9, True, (None, 9)),  # bubblewrap itself killed (the pool's own kill)
        (137, True, (None, 9)),  # bubblewrap reports its child's SIGKILL as 128 + 9
        (139, True, (None, 11)),
        (137, False, (137, None)),  # unsandboxed: the runtime's own status
        (-11, False, (None, 11)),
        (255, True, (255, None)),  # not a signal number
    ],
)
def test_wait_statuses(
    returncode: int, sandboxed: bool, expected: tuple[int | None, int | None]
) -> None:
    assert of_wait_status(returncode, sandboxed=sandboxed) == expected


def test_each_ending_has_its_words() -> None:
    oom = Ending(signal=signal.SIGKILL, oom_killed=True, memory_mb=128)
    assert worker_ended(oom) == "worker killed: out of memory (128 MiB limit)"
    # an OOM kill long ago (of a child) does not explain an exit of the worker's own
    assert worker_ended(Ending(status=3, oom_killed=True, memory_mb=128)) == (
        "worker exited with status 3"
    )
    assert worker_ended(Ending(signal=signal.SIGSEGV)) == "worker killed by signal SIGSEGV"
    assert worker_ended(Ending(signal=signal.SIGXCPU, cpu_seconds=10)) == (
        "worker killed: CPU-time limit reached (10 s)"
    )
    assert "file-size limit of 64 MiB" in worker_ended(
        Ending(signal=signal.SIGXFSZ, file_size_mb=64)
    )
    assert worker_ended(Ending(signal=99)) == "worker killed by signal 99"
    forked = worker_ended(Ending(status=1, process_limit=64))
    assert forked == "worker exited with status 1 (a fork was refused at its process limit of 64)"
    assert "without a complete answer" in worker_ended(None)
    assert "without a complete answer" in worker_ended(Ending())


def test_calls_that_die_without_their_worker() -> None:
    assert timed_out(30) == "timed out after 30 s (the worker was stopped)"
    assert timed_out(1.5).startswith("timed out after 1.5 s")
    assert response_too_large(32 * 1024 * 1024).startswith("response larger than 32 MiB")
    assert did_not_start(Ending(status=1)) == (
        "worker did not start: exited with status 1; see the function's logs"
    )
    assert "not ready within 20 s" in did_not_start(None, start_timeout_s=20)


def test_sizes() -> None:
    assert size(32 * 1024 * 1024) == "32 MiB"
    assert size(64 * 1024) == "64 KiB"
    assert size(1 << 30) == "1 GiB"
    assert size(1000) == "1000 bytes"
    assert size(1536 * 1024) == "1536 KiB"


def test_a_log_line_is_one_bounded_line() -> None:
    line = log_line("a\nforged line\n" + "x" * 1000, invocation_id="abc")
    assert line.startswith("[sless] call abc: a forged line ")
    assert line.count("\n") == 1
    assert len(line) <= len("[sless] call abc: \n") + MAX_REASON_CHARS

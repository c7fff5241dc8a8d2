"""Why a call died: one mapping from how it ended to the words its tenant reads.

Every way a call can die is told in the same words, made here and only here: to the
caller (the error message of ``/fn/...``, of an asynchronous call, a job run, a cron
tick, a RabbitMQ delivery: all go through ``sless.backends.call_function``), to the
function's own log (a line marked ``[sless]``) and to the invocation record (its
``reason``). A call dies when

- its worker ends: killed by the memory cgroup (or, in Kubernetes mode, OOMKilled),
  by a signal of its own making (SIGSEGV...), by the CPU-time or file-size rlimit
  (SIGXCPU, SIGXFSZ), or it exits with a status; forks refused at the process limit
  meanwhile are mentioned, as a likely cause;
- the worker did not start (its import failed: its own last lines are in the log);
- it runs past the function's ``timeout_s`` (the worker is then stopped);
- its answer is larger than the platform's response limit
  (``SLESS_GATEWAY_MAX_RESPONSE_BYTES``).

A backend gathers the facts (``Ending``: a bubblewrap worker's wait status and cgroup
counters, ``sless.sandbox.Worker.ending``; a container's terminated state); this module
turns them into words. The words name limits and numbers only: never a host path, a
worker's host-side name, an environment value or a secret.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

#: at most this many characters of a reason anywhere (a record, a log line, an error)
MAX_REASON_CHARS = 300


@dataclass(frozen=True, slots=True)
class Ending:
    """What is known of how a worker ended (all None/False: nothing is known)."""

    #: the status it exited with on its own
    status: int | None = None
    #: the signal that killed it
    signal: int | None = None
    #: the memory cgroup's OOM killer (the kubelet: ``OOMKilled``) killed it
    oom_killed: bool = False
    #: its memory limit, MiB
    memory_mb: int | None = None
    #: its process limit, when a fork was refused at it while it ran
    process_limit: int | None = None
    #: its CPU-time limit (RLIMIT_CPU), seconds, when it has one
    cpu_seconds: int | None = None
    #: its file-size limit (RLIMIT_FSIZE), MiB, when it has one
    file_size_mb: int | None = None


def of_wait_status(returncode: int, *, sandboxed: bool) -> tuple[int | None, int | None]:
    """``(status, signal)`` of a worker process's return code.

    A negative code is the signal that killed the process itself. Under bubblewrap the
    process is bubblewrap, which exits with ``128 + N`` when the sandboxed process was
    killed by signal N (as a shell does): that is read as signal N."""
    if returncode < 0:
        return None, -returncode
    if sandboxed and 128 < returncode < 128 + 65:
        return None, returncode - 128
    return returncode, None


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def size(n: int) -> str:
    """Bytes as the largest whole unit: ``32 MiB``, ``64 KiB``, ``1000 bytes``."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} bytes"


def worker_ended(ending: Ending | None) -> str:
    """Why a call's worker stopped answering."""
    if ending is None:
        return "the worker closed the connection without a complete answer"
    killed = ending.signal
    # an OOM kill counted earlier (of a child) does not explain an exit of the worker's own
    if ending.oom_killed and killed in (None, signal.SIGKILL) and ending.status is None:
        limit = f" ({ending.memory_mb} MiB limit)" if ending.memory_mb else ""
        reason = f"worker killed: out of memory{limit}"
    elif killed == signal.SIGXCPU:
        limit = f" ({ending.cpu_seconds} s)" if ending.cpu_seconds else ""
        reason = f"worker killed: CPU-time limit reached{limit}"
    elif killed == signal.SIGXFSZ:
        limit = f" of {ending.file_size_mb} MiB" if ending.file_size_mb else ""
        reason = f"worker killed: a file grew past the file-size limit{limit}"
    elif killed is not None:
        reason = f"worker killed by signal {signal_name(killed)}"
    elif ending.status is not None:
        reason = f"worker exited with status {ending.status}"
    else:
        reason = "the worker closed the connection without a complete answer"
    if ending.process_limit is not None:
        reason += f" (a fork was refused at its process limit of {ending.process_limit})"
    return reason


def did_not_start(ending: Ending | None, *, start_timeout_s: float | None = None) -> str:
    """Why a worker never became ready (its own last lines are in the function's log)."""
    if ending is None:
        waited = f" within {start_timeout_s:g} s" if start_timeout_s is not None else ""
        return f"worker did not start: not ready{waited}; see the function's logs"
    return f"worker did not start: {_unprefixed(worker_ended(ending))}; see the function's logs"


def timed_out(timeout_s: float) -> str:
    return f"timed out after {timeout_s:g} s (the worker was stopped)"


def response_too_large(limit_bytes: int) -> str:
    return f"response larger than {size(limit_bytes)} (the platform's limit)"


def log_line(reason: str, *, invocation_id: object = None) -> str:
    """The line the platform appends to the function's log: marked, one line, bounded."""
    call = f"call {invocation_id}: " if invocation_id is not None else ""
    return f"[sless] {call}{bounded(reason)}\n"


def bounded(reason: str) -> str:
    """One line of at most ``MAX_REASON_CHARS``."""
    flat = " ".join(reason.split())
    return flat if len(flat) <= MAX_REASON_CHARS else flat[: MAX_REASON_CHARS - 1] + "…"


def _unprefixed(reason: str) -> str:
    """``worker exited with status 5`` → ``exited with status 5`` (after "worker did not
    start:"), ``worker killed: out of memory`` → ``killed: out of memory``."""
    return reason.removeprefix("worker ")

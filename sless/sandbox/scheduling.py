"""Workers run as ``SCHED_BATCH``: tenant code never preempts the gateway when it wakes.

A worker wakes on every call, when the gateway writes the request to its socket. Under
``SCHED_OTHER`` the kernel lets the task that wakes preempt the one that woke it, so the
gateway, through which every tenant's calls pass, was switched out on about every other
call under load (bench/invoke.py: 0.45-0.55 involuntary context switches per call), and
took another pass through the scheduler to finish the call it was writing. ``SCHED_BATCH``
keeps the CPU share by weight (nice value, the cgroup's shares) and only drops that
wakeup preemption (sched(7)): the gateway finishes what it is doing, and the woken worker
runs on another core or next. Measured at 16 connections: throughput +25 %, the
gateway's CPU per call -7 % (docs/PERFORMANCE.md, "Issue 32, seventh stop").

It is set from the host on a worker's processes while they wait to run the tenant's code
(bubblewrap's ``--block-fd``, the shell before ``runsc``), so everything they start
inherits it. It is not a bound: a tenant may set its own threads back to ``SCHED_OTHER``
(a policy is the process's own to choose among the unprivileged ones), and gets back
only what every worker had before.
"""

from __future__ import annotations

import logging
import os

__all__ = ["as_batch"]

log = logging.getLogger(__name__)


def as_batch(*pids: int) -> None:
    """Set ``pids`` (processes waiting to run a worker's code) to ``SCHED_BATCH``. A
    process gone meanwhile is skipped; a refusal (a gateway that is neither root nor the
    worker's uid) leaves the default policy, said once in the log."""
    for pid in pids:
        try:
            os.sched_setscheduler(pid, os.SCHED_BATCH, os.sched_param(0))
        except ProcessLookupError:
            continue
        except PermissionError as e:
            global _refused_said
            if not _refused_said:
                _refused_said = True
                log.warning("workers run under the default scheduling policy: %s", e)


_refused_said = False

"""Why a FunctionJob's run failed, in words its tenant reads in the job's status.

A run is one Job whose one pod (the invoker: curl, ``sless.policies.pods.invoker_pod_spec``)
POSTs the payload to the function through the gateway. It fails when

- the Job's deadline passes (``DeadlineExceeded``: the call, or the wait for a node or an
  image, took longer than ``activeDeadlineSeconds``);
- the invoker is killed (``OOMKilled``, a signal), in the words of ``sless.models.endings``;
- curl exits non-zero (``Error``): its exit status says what went wrong (the gateway's
  name did not resolve, the connection was refused, the function answered an HTTP error)
  and the container's termination message holds the gateway's answer, or curl's own
  error line when there is no answer (``FallbackToLogsOnError``);
- the pod cannot start (an image that cannot be pulled): its waiting reason.
"""

from __future__ import annotations

from typing import Any

from sless.models import endings

#: curl's exit statuses that a run can end with (curl(1), "EXIT CODES")
_CURL = {
    6: "could not resolve the gateway's host name (cluster DNS)",
    7: "could not connect to the gateway",
    22: "the call answered an HTTP error",
    28: "the call timed out",
    52: "the gateway closed the connection without an answer",
    56: "the connection to the gateway broke",
}


def run_failure(job: dict[str, Any], pods: list[dict[str, Any]]) -> str:
    """One line: why the run of ``job`` (a failed Job) failed."""
    spec = job.get("spec") or {}
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("status") != "True" or cond.get("type") not in ("Failed", "FailureTarget"):
            continue
        if cond.get("reason") == "DeadlineExceeded":
            deadline = spec.get("activeDeadlineSeconds")
            within = f" of {deadline} s" if deadline else ""
            return endings.bounded(f"the run failed: DeadlineExceeded: past its deadline{within}")
    for pod in pods:
        found = _pod_failure(pod)
        if found:
            return endings.bounded(f"the run failed: {found}")
    return "the run failed"


def _pod_failure(pod: dict[str, Any]) -> str | None:
    status = pod.get("status") or {}
    limits = {
        str(c.get("name")): _limit_mb(c) for c in (pod.get("spec") or {}).get("containers") or []
    }
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        terminated = state.get("terminated")
        if isinstance(terminated, dict):
            return _terminated(terminated, limits.get(str(container.get("name"))))
        waiting = state.get("waiting") or {}
        if waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            return f"{waiting['reason']}: {waiting.get('message') or 'the invoker did not start'}"
    if status.get("reason"):  # the pod itself: Evicted, DeadlineExceeded
        return f"{status['reason']}: {status.get('message') or ''}".rstrip(": ")
    return None


def _terminated(terminated: dict[str, Any], memory_mb: int | None) -> str | None:
    reason = str(terminated.get("reason") or "Error")
    code = terminated.get("exitCode")
    message = " ".join(str(terminated.get("message") or "").split())
    if reason == "OOMKilled" or code not in _CURL:
        ending = _ending(terminated, memory_mb)
        if ending is None:
            return None
        said = endings.worker_ended(ending).replace("worker", "the invoker", 1)
        return f"{reason}: {said}" + (f": {message}" if message else "")
    return f"{reason}: {_CURL[code]} (curl exit {code})" + (f": {message}" if message else "")


def _ending(terminated: dict[str, Any], memory_mb: int | None) -> endings.Ending | None:
    """The container's end as an ``Ending`` (as the gateway reads a function pod's); None
    for a clean exit."""
    code, oom = terminated.get("exitCode"), terminated.get("reason") == "OOMKilled"
    if not isinstance(code, int) or (code == 0 and not oom):
        return None
    status, killed = endings.of_wait_status(code, sandboxed=True)
    return endings.Ending(status=status, signal=killed, oom_killed=oom, memory_mb=memory_mb)


def _limit_mb(container: dict[str, Any]) -> int | None:
    limit = str(((container.get("resources") or {}).get("limits") or {}).get("memory", ""))
    return int(limit[:-2]) if limit.endswith("Mi") and limit[:-2].isdigit() else None

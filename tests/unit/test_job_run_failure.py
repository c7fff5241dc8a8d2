"""A failed FunctionJob run says why in its status (sless.operator.run_endings): the Job's
deadline, the invoker's OOM kill with its limit, curl's exit status with the gateway's
answer or curl's own error line, a pod that never started. Objects as the API serves them
(a Job's status conditions, its pod's container states)."""

from __future__ import annotations

from typing import Any

from sless.operator.run_endings import run_failure


def _job(reason: str = "BackoffLimitExceeded", deadline: int = 345) -> dict[str, Any]:
    return {
        "spec": {"activeDeadlineSeconds": deadline, "backoffLimit": 0},
        "status": {"conditions": [{"type": "Failed", "status": "True", "reason": reason}]},
    }


def _pod(state: dict[str, Any], memory: str = "32Mi") -> dict[str, Any]:
    return {
        "spec": {"containers": [{"name": "invoke", "resources": {"limits": {"memory": memory}}}]},
        "status": {"phase": "Failed", "containerStatuses": [{"name": "invoke", "state": state}]},
    }


def test_a_deadline_is_named_with_its_seconds() -> None:
    said = run_failure(_job("DeadlineExceeded"), [])
    assert said == "the run failed: DeadlineExceeded: past its deadline of 345 s"


def test_an_oom_killed_invoker_is_named_with_its_limit() -> None:
    pod = _pod({"terminated": {"reason": "OOMKilled", "exitCode": 137}})
    said = run_failure(_job(), [pod])
    assert said == "the run failed: OOMKilled: the invoker killed: out of memory (32 MiB limit)"


def test_an_unresolvable_gateway_says_so_with_curls_line() -> None:
    line = "curl: (6) Could not resolve host: sless-gateway.sless-system.svc\n"
    pod = _pod({"terminated": {"reason": "Error", "exitCode": 6, "message": line}})
    said = run_failure(_job(), [pod])
    assert said == (
        "the run failed: Error: could not resolve the gateway's host name (cluster DNS)"
        " (curl exit 6): curl: (6) Could not resolve host: sless-gateway.sless-system.svc"
    )


def test_an_http_error_of_the_function_carries_the_gateways_answer() -> None:
    body = '{"error": {"code": "function_error", "message": "boom"}}'
    pod = _pod({"terminated": {"reason": "Error", "exitCode": 22, "message": body}})
    said = run_failure(_job(), [pod])
    assert said.startswith("the run failed: Error: the call answered an HTTP error (curl exit 22)")
    assert "boom" in said


def test_an_invoker_that_never_started_gives_its_waiting_reason() -> None:
    pod = _pod({"waiting": {"reason": "ImagePullBackOff", "message": "not found"}})
    assert run_failure(_job(), [pod]) == "the run failed: ImagePullBackOff: not found"


def test_nothing_known_is_still_a_failure() -> None:
    assert run_failure(_job(), []) == "the run failed"


def test_a_long_answer_is_bounded_to_one_line() -> None:
    pod = _pod({"terminated": {"reason": "Error", "exitCode": 22, "message": "x\n" * 5000}})
    said = run_failure(_job(), [pod])
    assert "\n" not in said
    assert len(said) <= 300

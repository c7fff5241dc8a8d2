"""Kubernetes mode: a pod's ended containers in the words of sless.models.endings."""

from __future__ import annotations

from typing import Any

from sless.backends.kubernetes.logs import container_ending, ended_lines


def _pod(*terminated: dict[str, Any], memory: str = "128Mi") -> dict[str, Any]:
    states = [{"terminated": t} for t in terminated] + [{"running": {}}]
    return {
        "spec": {"containers": [{"name": "function", "resources": {"limits": {"memory": memory}}}]},
        "status": {
            "containerStatuses": [{"name": "function", "lastState": states[0], "state": states[-1]}]
        },
    }


def test_an_oom_killed_container_is_named_with_its_limit() -> None:
    lines = ended_lines(_pod({"exitCode": 137, "reason": "OOMKilled"}))
    assert lines == "[sless] worker killed: out of memory (128 MiB limit)\n"
    assert "(1024 MiB limit)" in ended_lines(
        _pod({"exitCode": 137, "reason": "OOMKilled"}, memory="1Gi")
    )


def test_exits_and_signals() -> None:
    assert "exited with status 3" in ended_lines(_pod({"exitCode": 3, "reason": "Error"}))
    assert "signal SIGSEGV" in ended_lines(_pod({"exitCode": 139, "reason": "Error"}))
    assert container_ending({"exitCode": 0, "reason": "Completed"}, 128) is None
    assert ended_lines({"status": {}}) == ""
    assert ended_lines(_pod()) == ""

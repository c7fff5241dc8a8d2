"""When node addresses change, every Function is reconciled again (its egress policy then
excepts the new set); one function that fails does not keep the others stale, and the
next node event writes them all again. The real watch, against a kube-apiserver, is
tests/kube/test_operator.py::test_a_node_that_joins_later_is_excepted_from_egress_at_once.
"""

from __future__ import annotations

from typing import Any

import kopf
import pytest

from sless.operator import nodes
from sless.operator.nodes import NodeAddresses


class _Api:
    def __init__(self, functions: list[str]) -> None:
        self.functions = functions

    async def list(self, path: str) -> list[dict[str, Any]]:
        assert path.endswith("/functions"), path
        return [{"metadata": {"namespace": "sless-acme", "name": n}} for n in self.functions]


class _Op:
    group_version = "sless.kube5s.ru/v1"

    def __init__(self, addresses: list[str], functions: list[str]) -> None:
        self.addresses = addresses
        self.api = _Api(functions)

    async def node_addresses(self) -> list[str]:
        return list(self.addresses)


@pytest.fixture
def reconciled(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"names": [], "fail": {}}

    async def reconcile(op: Any, body: dict[str, Any]) -> None:
        name = body["metadata"]["name"]
        seen["names"].append(name)
        failure = seen["fail"].pop(name, None)
        if failure is not None:
            raise failure

    monkeypatch.setattr(nodes.functions, "reconcile", reconcile)
    return seen


async def test_no_change_writes_nothing_and_a_change_writes_every_function(
    reconciled: dict[str, Any],
) -> None:
    op = _Op(["10.9.0.5"], ["a", "b"])
    watch = NodeAddresses(["10.9.0.5"])
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == []
    op.addresses.append("203.0.113.77")
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == ["a", "b"]
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == ["a", "b"]


async def test_one_failure_leaves_the_others_written_and_the_next_event_retries(
    reconciled: dict[str, Any],
) -> None:
    op = _Op(["10.9.0.5", "203.0.113.77"], ["a", "b", "c"])
    watch = NodeAddresses(["10.9.0.5"])
    reconciled["fail"] = {"a": RuntimeError("409 conflict"), "b": kopf.TemporaryError("build")}
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == ["a", "b", "c"]
    # the same addresses, but "a" was not written: the next event writes them all
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == ["a", "b", "c", "a", "b", "c"]
    await watch.changed(op)  # type: ignore[arg-type]
    assert reconciled["names"] == ["a", "b", "c", "a", "b", "c"]

"""The nodes' own addresses in every function's egress policy, as nodes join and leave.

A function's egress policy excepts every address the cluster's Nodes report (their
kubelets and host ports answer there: ``Operator.node_addresses``), read when the policy
is written. A node that joins later would be reachable through a wide rule
(``0.0.0.0/0:10250``) until the function's policy is next written, so a change in the set
of node addresses writes every function's policies again: ``functions.reconcile`` is
level-based, and reads the addresses afresh.
"""

from __future__ import annotations

import asyncio
import logging

import kopf

from sless.kube import collection_path
from sless.operator import functions
from sless.operator.state import Operator

__all__ = ["NodeAddresses"]

log = logging.getLogger("sless.operator")


class NodeAddresses:
    """The node addresses the functions' policies were last written with."""

    def __init__(self, addresses: list[str]) -> None:
        #: None: some function's policies may be stale, write them all at the next event
        self.written: frozenset[str] | None = frozenset(addresses)
        self._lock = asyncio.Lock()

    async def changed(self, op: Operator) -> None:
        """A Node was added, changed or removed: if the set of node addresses differs from
        the one the policies hold, write every function's policies again. Under one lock,
        so that two events write them once, with the newest set."""
        async with self._lock:
            addresses = frozenset(await op.node_addresses())
            if addresses == self.written:
                return
            log.info(
                "node addresses changed (%d now): writing every function's egress policy",
                len(addresses),
            )
            self.written = addresses
            path = collection_path(op.group_version, "Function")
            for body in await op.api.list(path):
                meta = body.get("metadata") or {}
                try:
                    await functions.reconcile(op, body)
                except (kopf.TemporaryError, kopf.PermanentError) as e:
                    # already in the function's status; its own handler retries, and
                    # reads the addresses afresh then
                    log.info("function %s/%s: %s", meta.get("namespace"), meta.get("name"), e)
                except Exception:
                    # one function's failure does not keep the others' policies stale;
                    # the next node event writes them all again
                    log.exception(
                        "function %s/%s: egress policy not rewritten after a node change",
                        meta.get("namespace"),
                        meta.get("name"),
                    )
                    self.written = None

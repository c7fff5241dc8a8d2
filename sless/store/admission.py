"""The code gate: which code may serve, asked with the versions table (issue 26).

``CodeGate`` is the one decision of every path that has the database: the gateway's PUT,
upload, rollback, traffic and review decisions, and the embedded reconciler before it
builds a version or starts a pool of one. It reads the states of the versions a spec
would run and applies the pure rule (``sless.models.admission``): only ``allowed`` serves.
In Kubernetes mode the gateway writes ``allowed_versions`` into the Function's status for
the operator, which has no database.
"""

from __future__ import annotations

from collections.abc import Sequence

from sless.errors import Invalid
from sless.models import FunctionSpec, Refusal, VersionState, refusals, wanted_versions
from sless.store.versions import VersionRepository


class CodeGate:
    def __init__(self, versions: VersionRepository) -> None:
        self.versions = versions

    async def refused(
        self, namespace: str, name: str, versions: Sequence[str | None]
    ) -> list[Refusal]:
        """The ``versions`` of the function that may not serve (empty: all may)."""
        named = [v for v in versions if v is not None]
        found = await self.versions.find_many(namespace, name, named) if named else {}
        states = {version: record.state for version, record in found.items()}
        return refusals(list(versions), states)

    async def refused_spec(self, namespace: str, name: str, spec: FunctionSpec) -> list[Refusal]:
        """What of ``spec`` may not serve: its current version, then its traffic targets."""
        return await self.refused(namespace, name, wanted_versions(spec))

    async def require(self, namespace: str, name: str, versions: Sequence[str]) -> None:
        """422 unless every one of ``versions`` exists and may serve."""
        refused = await self.refused(namespace, name, list(versions))
        if refused:
            raise Invalid(refused[0].reason(name))

    async def allowed_versions(self, namespace: str, name: str) -> list[str]:
        """Every version of the function that may serve (for the operator's status)."""
        return await self.versions.in_state(namespace, name, VersionState.ALLOWED)

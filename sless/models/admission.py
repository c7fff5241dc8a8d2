"""Which code may serve: the one rule every path asks (issue 26).

Only a version whose state is ``allowed`` may be built, started or called: its upload's
verdict was ``allow``, or a provider approved its review. A ``held`` version waits for the
review; a ``rejected`` one never runs. Deny by default: code that names no version (stored
before versions existed) or a version that is not recorded never runs either.

The rule is pure; its inputs come from where each path stands. With the database (the
gateway's PUT, upload, rollback, traffic and review decisions; the embedded reconciler's
build and pool-start decisions) ``sless.store.CodeGate`` reads the states of the versions
table. The Kubernetes operator has no database: it reads the allowed versions the gateway
writes into the Function's status (``allowedVersions``), computed by the same gate. The
event sources (cron, jobs, async calls, RabbitMQ) and ``name@vN`` calls reach code only
through the backend's serving view, which only ever holds versions this rule admitted.

A spec whose version may not serve is not an error: it is stored, its phase says why
(``Validating``: held for review; ``Rejected``), and the last allowed version keeps serving.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sless.models.functions import FunctionSpec, Phase, VersionState

HELD_MESSAGE = "held for provider review"


def may_serve(state: VersionState | None) -> bool:
    """The rule: only an allowed version (None: no such version) may serve."""
    return state is VersionState.ALLOWED


@dataclass(frozen=True, slots=True)
class Refusal:
    """A version that may not serve, and why (its state; None: not recorded)."""

    version: str | None
    state: VersionState | None

    @property
    def phase(self) -> Phase:
        """The phase a function whose current version this is shows."""
        return Phase.VALIDATING if self.state is VersionState.HELD else Phase.REJECTED

    @property
    def message(self) -> str:
        if self.state is VersionState.HELD:
            return HELD_MESSAGE
        if self.state is VersionState.REJECTED:
            return f"version {self.version} was rejected by the provider's review"
        if self.version is None:
            return "the code has no recorded version: upload it again"
        return f"version {self.version} is not recorded: upload the code again"

    def reason(self, function: str) -> str:
        """The error text of a request that names this version (rollback, traffic)."""
        if self.state is None:
            return f"function {function!r} has no version {self.version}"
        return f"version {self.version} of {function!r} cannot serve: it is {self.state.value}"


def wanted_versions(spec: FunctionSpec) -> list[str | None]:
    """The versions a spec would run: its current one, then its traffic targets (a spec
    with code but no version: [None], which never serves)."""
    if spec.code is None:
        return []
    if spec.code.version is None:
        return [None]
    return list(spec.routed_versions())


def refusals(versions: list[str | None], states: Mapping[str, VersionState]) -> list[Refusal]:
    """The ``versions`` that may not serve, in order, given the known ``states``."""
    out = []
    for version in versions:
        state = states.get(version) if version is not None else None
        if not may_serve(state):
            out.append(Refusal(version, state))
    return out

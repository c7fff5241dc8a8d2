"""Validating an upload, remembering its report: the same code is checked once.

A report is kept by (code sha256, ``runtime:entrypoint:fingerprint:detonation``): the
fingerprint (``Validator.fingerprint``) changes with the rules and the reviewer, and the
detonation key with what the spec declares (its egress and its secrets), so a report
made under other rules or for another spec's declarations is never reused. The rule that
matters: a report with a stage in ``error`` (semgrep crashed, the LLM timed out) is never
remembered, so the next upload of the same code is validated again rather than answered
with a failure that will pass.

The archive is validated in a scratch directory that is removed afterwards, whatever
the outcome. Where reports are kept is the caller's (``sless.store.ReportRepository`` in
the gateway): this module names only the shape it needs.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from sless.models import FunctionSpec
from sless.validation.detonation import Detonation
from sless.validation.pipeline import Validator
from sless.validation.report import Report


class ReportStore(Protocol):
    """Where reports are kept (``sless.store.ReportRepository``)."""

    async def get(self, sha256: str, runtime: str) -> dict[str, Any] | None: ...

    async def put(
        self, sha256: str, runtime: str, verdict: str, report: dict[str, Any]
    ) -> None: ...


class Validated(NamedTuple):
    report: Report
    #: True when the report was remembered, not made now
    cached: bool


def rememberable(report: Report) -> bool:
    """A report may be kept only when no stage failed to run: an error must be retried."""
    return not any(stage.status == "error" for stage in report.stages)


class ReportCache:
    """The validator, in front of it the reports already made."""

    def __init__(self, validator: Validator, reports: ReportStore) -> None:
        self.validator = validator
        self.reports = reports

    async def validate(self, data: bytes, *, sha256: str, spec: FunctionSpec) -> Validated:
        """The report of ``data`` as the code of ``spec`` (its runtime and entrypoint)."""
        runtime, entrypoint = spec.runtime.value, spec.entrypoint
        detonation = Detonation.from_spec(spec)
        cache_key = f"{runtime}:{entrypoint}:{self.validator.fingerprint}:{detonation.key}"
        cached = await self.reports.get(sha256, cache_key)
        if cached is not None:
            return Validated(Report.model_validate(cached), cached=True)
        scratch = Path(tempfile.mkdtemp(prefix="sless-upload-"))
        try:
            report = await self.validator.validate_archive(
                data,
                scratch / "code",
                sha256=sha256,
                runtime=runtime,
                entrypoint=entrypoint,
                detonation=detonation,
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if rememberable(report):
            await self.reports.put(
                sha256, cache_key, report.verdict.value, report.model_dump(mode="json")
            )
        return Validated(report, cached=False)

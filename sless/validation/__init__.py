"""Upload validation: archive safety, entrypoint, static rules, manifests, detonation, LLM
review."""

from sless.validation.archive import extract_archive, inspect_archive
from sless.validation.detonation import Detonation
from sless.validation.manifests import dependency_violations
from sless.validation.pipeline import Validator
from sless.validation.remembering import ReportCache, ReportStore, Validated, rememberable
from sless.validation.report import Finding, Report, StageResult, Verdict, combine

__all__ = [
    "Detonation",
    "Finding",
    "Report",
    "ReportCache",
    "ReportStore",
    "StageResult",
    "Validated",
    "Validator",
    "Verdict",
    "combine",
    "dependency_violations",
    "extract_archive",
    "inspect_archive",
    "rememberable",
]

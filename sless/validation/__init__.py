"""Upload validation: archive safety, entrypoint, static rules, manifests, LLM review."""

from sless.validation.archive import extract_archive, inspect_archive
from sless.validation.pipeline import Validator
from sless.validation.remembering import ReportCache, ReportStore, Validated, rememberable
from sless.validation.report import Finding, Report, StageResult, Verdict, combine

__all__ = [
    "Finding",
    "Report",
    "ReportCache",
    "ReportStore",
    "StageResult",
    "Validated",
    "Validator",
    "Verdict",
    "combine",
    "extract_archive",
    "inspect_archive",
    "rememberable",
]

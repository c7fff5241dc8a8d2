"""Upload validation: archive safety, entrypoint, static rules, manifests, LLM review."""

from sless.validation.archive import extract_archive, inspect_archive
from sless.validation.pipeline import Validator
from sless.validation.report import Finding, Report, StageResult, Verdict, combine

__all__ = [
    "Finding",
    "Report",
    "StageResult",
    "Validator",
    "Verdict",
    "combine",
    "extract_archive",
    "inspect_archive",
]

"""What a checker returns: every violation, each with the path of the offending field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Violation:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class PolicyViolation(ValueError):
    """A rendered object failed its own checker: never applied."""

    def __init__(self, what: str, violations: list[Violation]) -> None:
        self.violations = violations
        super().__init__(f"{what} violates policy: " + "; ".join(map(str, violations[:10])))

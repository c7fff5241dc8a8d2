"""The upload as the model reads it: code files stripped of comments, numbered, split into
parts within the token budget. Large uploads are split, never truncated."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sless.validation.stripping import Language, strip

#: characters per token, for the estimate
CHARS_PER_TOKEN = 4

_SUFFIXES: dict[str, Language | Literal["requirements", "text"]] = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
}
_MANIFESTS: dict[str, Literal["requirements", "text"]] = {
    "requirements.txt": "requirements",
    "package.json": "text",
}
_HEADER_OVERHEAD = 120


@dataclass(frozen=True)
class Source:
    path: str
    text: str
    line_count: int
    note: str | None


@dataclass
class Chunk:
    path: str
    line_count: int
    note: str | None
    rows: list[str] = field(default_factory=list)
    first: int = 0
    last: int = 0
    size: int = _HEADER_OVERHEAD


def _kind(path: Path) -> Language | Literal["requirements", "text"] | None:
    name = path.name.lower()
    if name in _MANIFESTS:
        return _MANIFESTS[name]
    if name.startswith("requirements") and name.endswith(".txt"):
        return "requirements"
    return _SUFFIXES.get(path.suffix.lower())


class TooLarge(Exception):
    pass


def collect(directory: Path, max_bytes: int) -> list[Source]:
    """Every code and manifest file under ``directory``, stripped, in a stable order.

    Symbolic links are neither followed nor read (the archive stage refuses them; this is
    a second line). Raises :class:`TooLarge` as soon as the raw code exceeds
    ``max_bytes``, before stripping it all.
    """
    sources: list[Source] = []
    total = 0
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            kind = _kind(path)
            if kind is None or path.is_symlink() or not path.is_file():
                continue
            raw = path.read_bytes()
            total += len(raw)
            if total > max_bytes:
                raise TooLarge
            text = raw.decode("utf-8-sig", errors="replace")
            note: str | None = None
            if kind == "requirements":
                text = _strip_requirements(text)
            elif kind != "text":
                stripped = strip(text, kind)
                text, note = stripped.text, stripped.note
            rel = path.relative_to(directory).as_posix()
            sources.append(Source(rel, text, text.count("\n") + 1, note))
    return sources


def _strip_requirements(text: str) -> str:
    """pip's own comment rule: ``#`` at the start of a line or after whitespace."""
    out = []
    for line in text.split("\n"):
        for i, char in enumerate(line):
            if char == "#" and (i == 0 or line[i - 1].isspace()):
                line = line[:i].rstrip()
                break
        out.append(line)
    return "\n".join(out)


def _chunks(source: Source, budget_chars: int) -> list[Chunk]:
    """``source`` as numbered rows, split by lines into chunks within the budget.

    Blank lines are not sent (numbers keep the mapping); a line longer than the budget
    is cut into several rows with the same number.
    """
    width = budget_chars - _HEADER_OVERHEAD - 16
    chunks: list[Chunk] = []
    current = Chunk(source.path, source.line_count, source.note)
    for number, raw in enumerate(source.text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        for start in range(0, len(line), width):
            row = f"{number}| {line[start : start + width]}"
            if current.rows and current.size + len(row) + 1 > budget_chars:
                chunks.append(current)
                current = Chunk(source.path, source.line_count, source.note)
            if not current.rows:
                current.first = number
            current.rows.append(row)
            current.last = number
            current.size += len(row) + 1
    if current.rows or not chunks:
        chunks.append(current)
    return chunks


def parts(sources: list[Source], token_budget: int) -> list[list[Chunk]]:
    chars = budget_chars(token_budget)
    out: list[list[Chunk]] = []
    current: list[Chunk] = []
    used = 0
    for source in sources:
        for chunk in _chunks(source, chars):
            if current and used + chunk.size > chars:
                out.append(current)
                current, used = [], 0
            current.append(chunk)
            used += chunk.size
    if current:
        out.append(current)
    return out


def budget_chars(token_budget: int) -> int:
    return max(token_budget, 256) * CHARS_PER_TOKEN

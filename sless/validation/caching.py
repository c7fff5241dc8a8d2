"""Per-file static results, kept by (path, content sha256, analysis fingerprint).

semgrep's open-source rules see one file at a time, and so do the text checks and the
deobfuscation: a file's findings depend only on its path (rules select files by suffix),
its bytes and the rules. A re-upload that changes one file of twenty scans one file.

The fingerprint covers the rule files, GuardDog's version and rules
(:func:`sless.validation.guarddog.fingerprint`) and :data:`ANALYSIS_VERSION`, bumped whenever the
Python-side checks change what they report. Only scans that completed are kept: a file
from a run that failed or timed out is scanned again next time. The cache is in-process
and bounded (least recently used first out); losing it only costs time.
"""

from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import NamedTuple

from sless.validation import guarddog
from sless.validation.report import Finding

__all__ = ["ANALYSIS_VERSION", "FileKey", "StaticCache", "analysis_fingerprint"]

#: bump when text_checks, deobfuscation or the semgrep driver change their findings
ANALYSIS_VERSION = "1"
_RULES_DIR = Path(__file__).resolve().parent / "rules"


class FileKey(NamedTuple):
    path: str
    sha256: str
    fingerprint: str


@functools.cache
def analysis_fingerprint(rules_dir: Path = _RULES_DIR) -> str:
    """A digest of every rule file, GuardDog's and the analysis version (once per process)."""
    digest = hashlib.sha256(f"analysis={ANALYSIS_VERSION}".encode())
    try:
        digest.update(f"guarddog={guarddog.fingerprint()}".encode())
    except guarddog.GuardDogError:
        digest.update(b"guarddog=missing")  # the static stage fails (review) without it
    for path in sorted(rules_dir.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(rules_dir)).encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class StaticCache:
    """An in-process map from :class:`FileKey` to that file's findings."""

    def __init__(self, max_entries: int = 20_000) -> None:
        self._max_entries = max_entries
        self._entries: OrderedDict[FileKey, tuple[Finding, ...]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: FileKey) -> list[Finding] | None:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return [f.model_copy() for f in found]

    def put(self, key: FileKey, findings: list[Finding]) -> None:
        self._entries[key] = tuple(f.model_copy() for f in findings)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)

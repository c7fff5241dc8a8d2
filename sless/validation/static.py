"""The static stage: semgrep with sless's own rules, GuardDog's maintained rules, the
Python-side text checks, and the score that weighs what they found.

Design and security reasoning:

- One semgrep start per upload (:mod:`sless.validation.semgrep`), or none when a few
  files are left to scan and the resident semgrep answers for them
  (:mod:`sless.validation.resident`, which hands back anything unexpected); the text
  checks (:mod:`sless.validation.text_checks`) and GuardDog's YARA rules
  (:mod:`sless.validation.guarddog`, its version in the stage's ``versions``) run in
  threads meanwhile.
- The files are enumerated here, without following links; anything that is not a regular
  file is a finding, never silently skipped.
- semgrep failing (missing, crashed, timed out, unparsable) makes the stage ``error`` with
  verdict ``review`` and the reason: never ``allow``.
- Findings beyond a cap are summarised, so a hostile file cannot flood the report.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sless.config import ValidationSettings
from sless.validation import guarddog
from sless.validation.caching import FileKey, StaticCache, analysis_fingerprint
from sless.validation.deobfuscation import Derived, derive
from sless.validation.report import Finding, StageResult, Verdict, static_finding, strictest
from sless.validation.resident import ResidentSemgrep
from sless.validation.scoring import score
from sless.validation.semgrep import SemgrepError, run_semgrep
from sless.validation.text_checks import read_capped, scan_all_text

__all__ = ["StaticScan", "list_files", "run_static", "scan_static"]

#: findings beyond this many are summarised, so a hostile file cannot flood the report
_MAX_FINDINGS = 500
_DETAIL_CHARS = 300
#: files whose views and literals are deobfuscated
_DERIVABLE = frozenset(
    {".py", ".pyw", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
)
#: other files the generic rules read
_TEXT_SUFFIXES = frozenset({".sh", ".json"})


@dataclass
class StaticScan:
    """What semgrep and the text checks found, before the findings are capped."""

    findings: list[Finding] = field(default_factory=list)
    #: set when semgrep gave no usable answer (the reason, without secrets)
    error: str | None = None
    skipped: bool = False
    _seen: set[tuple[str, str | None, int | None]] = field(default_factory=set)

    def add(self, finding: Finding) -> None:
        key = (finding.rule, finding.file, finding.line)
        if key not in self._seen:
            self._seen.add(key)
            self.findings.append(finding)


async def run_static(
    directory: Path,
    runtime: str,
    settings: ValidationSettings,
    *,
    cache: StaticCache | None = None,
    resident: ResidentSemgrep | None = None,
) -> StageResult:
    """Run semgrep and the text checks over an extracted upload.

    ``runtime`` does not narrow the rules: a Python function can ship JavaScript it runs
    with node (and vice versa), so every rule runs on every file. With a ``cache``, files
    scanned before (same path, bytes and rules) are not scanned again.
    """
    started = time.perf_counter()
    scan = await scan_static(directory, settings, cache=cache, resident=resident)
    status: Any = "ok"
    detail: str | None = None
    if scan.skipped:
        status, detail = "skipped", "semgrep disabled by settings; text checks ran"
    elif scan.error is not None:
        status, detail = "error", scan.error
    # weak signals (notes) that add up become one review or reject finding
    findings = _capped(score(scan.findings))
    floor = Verdict.REVIEW if scan.error is not None else Verdict.ALLOW
    return StageResult(
        name="static",
        status=status,
        detail=detail,
        findings=findings,
        verdict=strictest(findings, floor),
        duration_ms=(time.perf_counter() - started) * 1000,
        versions=_versions(),
    )


def _versions() -> dict[str, str]:
    try:
        return {"guarddog": guarddog.version()}
    except guarddog.GuardDogError:
        return {"guarddog": "missing"}


async def scan_static(
    directory: Path,
    settings: ValidationSettings,
    *,
    cache: StaticCache | None = None,
    resident: ResidentSemgrep | None = None,
) -> StaticScan:
    """Every finding of semgrep and the text checks over ``directory`` (one semgrep start).

    Deobfuscated views and decoded payloads (:mod:`sless.validation.deobfuscation`) are
    written to a private directory outside the upload and scanned in the same semgrep
    run; their findings are reported on the upload file and line they came from.
    """
    directory, files, unscannable = await asyncio.to_thread(list_files, directory)
    scan = StaticScan()
    for rel in unscannable:
        scan.add(static_finding("unscanned-entry", f"not a regular file: {rel}", rel, None))
    keys: dict[str, FileKey] = {}
    if cache is not None and settings.static_enabled:
        keys = await asyncio.to_thread(_file_keys, directory, files)
        for rel, key in keys.items():
            hit = cache.get(key)
            if hit is not None:
                files.remove(rel)
                for finding in hit:
                    scan.add(finding)
    fresh = await _scan_files(directory, files, settings, scan, resident)
    for finding in fresh:
        scan.add(finding)
    if cache is not None and scan.error is None and not scan.skipped:
        by_file: dict[str, list[Finding]] = {rel: [] for rel in files}
        for finding in fresh:
            if finding.file in by_file:
                by_file[finding.file].append(finding)
        for rel, found in by_file.items():
            if rel in keys:
                cache.put(keys[rel], found)
    return scan


async def _scan_files(
    directory: Path,
    files: list[str],
    settings: ValidationSettings,
    scan: StaticScan,
    resident: ResidentSemgrep | None = None,
) -> list[Finding]:
    """The findings of one semgrep run and the text checks over ``files``."""
    fresh: list[Finding] = []
    if not files:
        scan.skipped = not settings.static_enabled
        return fresh
    text_checks = asyncio.ensure_future(asyncio.to_thread(scan_all_text, directory, files))
    # in-process and fast (well under a millisecond a file): alongside semgrep, not after it
    rules = asyncio.ensure_future(asyncio.to_thread(guarddog.scan_files, directory, files))
    with tempfile.TemporaryDirectory(prefix="sless-derived-") as scratch:
        try:
            derived = await asyncio.to_thread(_write_derived, directory, files, Path(scratch))
            fresh.extend(derived.findings)
            if not settings.static_enabled:
                scan.skipped = True
            else:
                try:
                    targets = [*files, *derived.origins]
                    found = None
                    if resident is not None:
                        # a few files: the resident semgrep, or None for the one-shot scan
                        found = await resident.scan(
                            {t: Path(t) if t.startswith("/") else directory / t for t in targets}
                        )
                    if found is None:
                        found = await run_semgrep(directory, targets, settings)
                    for finding in found:
                        fresh.append(derived.remap(finding))
                except SemgrepError as e:
                    scan.error = str(e)[:_DETAIL_CHARS]
        except BaseException:
            text_checks.cancel()
            rules.cancel()
            raise
    fresh.extend(await text_checks)
    try:
        fresh.extend(await rules)
    except guarddog.GuardDogError as e:
        scan.error = str(e)[:_DETAIL_CHARS]
    return fresh


def _file_keys(directory: Path, files: list[str]) -> dict[str, FileKey]:
    fingerprint = analysis_fingerprint()
    keys: dict[str, FileKey] = {}
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for rel in files:
        try:
            fd = os.open(directory / rel, flags)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        keys[rel] = FileKey(rel, digest, fingerprint)
    return keys


@dataclass
class _DerivedTargets:
    #: absolute path of a derived file -> what it was derived from
    origins: dict[str, Derived] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def remap(self, finding: Finding) -> Finding:
        derived = self.origins.get(finding.file or "")
        if derived is None:
            return finding
        line = finding.line if derived.line is None else derived.line
        return finding.model_copy(
            update={
                "file": derived.origin,
                "line": line,
                "message": f"{finding.message} (found after deobfuscation: {derived.how})",
            }
        )


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _write_derived(directory: Path, files: list[str], scratch: Path) -> _DerivedTargets:
    out = _DerivedTargets()
    for rel in files:
        suffix = Path(rel).suffix.lower()
        if suffix not in _DERIVABLE and suffix not in _TEXT_SUFFIXES:
            continue
        data, _truncated = read_capped(directory / rel)
        if data is None or b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", "replace")
        views: list[Derived] = []
        if not _is_utf8(data):
            # semgrep's regex rules skip a file that is not valid UTF-8, and one stray
            # byte in a comment would hide the whole file from them: scan a decoded copy
            views.append(Derived(rel, suffix, text, None, "decoded as UTF-8"))
        if suffix in _DERIVABLE:
            found, findings = derive(rel, text)
            views.extend(found)
            out.findings.extend(findings)
        for derived in views:
            path = scratch / f"{len(out.origins)}{derived.suffix}"
            path.write_text(derived.text, encoding="utf-8", errors="replace")
            out.origins[path.as_posix()] = derived
    return out


def list_files(directory: Path) -> tuple[Path, list[str], list[str]]:
    """Regular files (relative, sorted) and anything else found, without following links."""
    directory = directory.resolve()
    files: list[str] = []
    odd: list[str] = []
    for root, dirs, names in os.walk(directory, followlinks=False):
        base = Path(root)
        for name in list(dirs):
            if (base / name).is_symlink():
                odd.append((base / name).relative_to(directory).as_posix())
                dirs.remove(name)
        for name in names:
            path = base / name
            rel = path.relative_to(directory).as_posix()
            mode = path.lstat().st_mode
            (files if stat.S_ISREG(mode) else odd).append(rel)
    return directory, sorted(files), sorted(odd)


def _capped(findings: list[Finding]) -> list[Finding]:
    if len(findings) <= _MAX_FINDINGS:
        return findings
    kept = sorted(findings, key=lambda f: -f.severity.rank)[:_MAX_FINDINGS]
    worst = kept[0].severity
    kept.append(
        static_finding(
            "too-many-findings",
            f"{len(findings) - _MAX_FINDINGS} more findings not listed",
            None,
            None,
            worst,
        )
    )
    return kept

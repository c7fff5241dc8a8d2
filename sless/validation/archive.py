"""Archive safety: read an uploaded zip defensively and extract it into a fresh directory.

Every member is checked before anything is written (CWE-22 path traversal / "zip slip",
CWE-59 link following, CWE-409 decompression bombs):

- names: no absolute paths, drive letters, backslashes, ``..`` components, NUL bytes,
  duplicates (two members that land on the same path), over-long or over-deep paths;
- types: only regular files and directories: symlinks, hard links, devices, FIFOs and
  sockets are refused (zip carries the Unix mode in ``external_attr``);
- sizes: member count, total and per-file uncompressed size, compression ratio; sizes are
  enforced again while extracting, on the bytes actually produced, since a zip's declared
  sizes are attacker-controlled;
- encrypted members are refused (they cannot be reviewed).

Extraction writes only regular files with fixed permissions (0644, directories 0755)
into a directory created for this upload.
"""

from __future__ import annotations

import io
import stat
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sless.config import ArchiveLimits
from sless.validation.report import Finding, StageResult, Verdict

#: below this uncompressed size a high compression ratio is normal (a file of spaces)
_RATIO_FLOOR_BYTES = 1024 * 1024
_CHUNK = 64 * 1024
_ALLOWED_TYPES = (stat.S_IFREG, stat.S_IFDIR, 0)  # 0: no Unix mode recorded (DOS zip)


@dataclass(frozen=True)
class ExtractResult:
    stage: StageResult
    files: int = 0
    total_bytes: int = 0


def _finding(rule: str, message: str, file: str | None = None) -> Finding:
    return Finding(rule=rule, message=message, file=file, source="archive")


def _check_name(name: str, limits: ArchiveLimits) -> str | None:
    """Return why a member name is unsafe, or None."""
    if "\x00" in name:
        return "member name contains a NUL byte"
    if "\\" in name:
        return "member name contains a backslash"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "absolute path"
    parts = PurePosixPath(name).parts
    if any(part == ".." for part in parts):
        return "path escapes the archive ('..')"
    if len(name) > limits.max_path_length:
        return f"path longer than {limits.max_path_length} characters"
    if len(parts) > limits.max_depth:
        return f"path deeper than {limits.max_depth} directories"
    return None


def _shown(name: str) -> str:
    """A member name as it may appear in a report: printable and short."""
    cleaned = "".join(c if c.isprintable() else "?" for c in name)
    return cleaned[:200]


def inspect_archive(
    data: bytes, limits: ArchiveLimits
) -> tuple[list[Finding], list[zipfile.ZipInfo]]:
    """Check every member of the zip without extracting anything."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        return [_finding("archive-not-zip", f"the upload is not a valid zip archive ({e})")], []
    findings: list[Finding] = []
    members = archive.infolist()
    if len(members) > limits.max_files:
        findings.append(
            _finding(
                "archive-too-many-files", f"{len(members)} members; the limit is {limits.max_files}"
            )
        )
        return findings, []
    seen: set[str] = set()
    total = 0
    for info in members:
        name = info.filename
        shown = _shown(name)
        reason = _check_name(name, limits)
        if reason:
            findings.append(_finding("archive-unsafe-path", reason, shown))
            continue
        normalized = str(PurePosixPath(name)).rstrip("/").lower()
        if normalized in seen:
            findings.append(_finding("archive-duplicate-member", "member appears twice", shown))
        seen.add(normalized)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind not in _ALLOWED_TYPES:
            what = {
                stat.S_IFLNK: "symbolic link",
                stat.S_IFCHR: "character device",
                stat.S_IFBLK: "block device",
                stat.S_IFIFO: "FIFO",
                stat.S_IFSOCK: "socket",
            }.get(kind, "special file")
            findings.append(_finding("archive-special-file", f"{what} in the archive", shown))
            continue
        if info.flag_bits & 0x1:
            findings.append(_finding("archive-encrypted", "encrypted member", shown))
            continue
        if info.is_dir():
            continue
        if info.file_size > limits.max_file_bytes:
            findings.append(
                _finding(
                    "archive-file-too-large",
                    f"{info.file_size} bytes uncompressed; the limit is {limits.max_file_bytes}",
                    shown,
                )
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size >= _RATIO_FLOOR_BYTES and ratio > limits.max_compression_ratio:
            findings.append(
                _finding(
                    "archive-compression-ratio",
                    f"compression ratio {ratio:.0f}:1 exceeds {limits.max_compression_ratio:.0f}:1",
                    shown,
                )
            )
        total += info.file_size
    if total > limits.max_total_bytes:
        findings.append(
            _finding(
                "archive-too-large",
                f"{total} bytes uncompressed; the limit is {limits.max_total_bytes}",
            )
        )
    return findings, members


def extract_archive(data: bytes, dest: Path, limits: ArchiveLimits) -> ExtractResult:
    """Check the archive and, if it is safe, extract it into ``dest`` (created here).

    ``dest`` must not exist: extraction never merges into an existing tree.
    """
    started = time.perf_counter()
    findings, members = inspect_archive(data, limits)
    if findings:
        return ExtractResult(stage=_stage(findings, started))
    dest.mkdir(mode=0o755, parents=False, exist_ok=False)
    root = dest.resolve()
    archive = zipfile.ZipFile(io.BytesIO(data))
    total = 0
    files = 0
    for info in members:
        target = (root / info.filename).resolve()
        if not target.is_relative_to(root):  # defence in depth; names were checked above
            findings.append(_finding("archive-unsafe-path", "path escapes", _shown(info.filename)))
            break
        if info.is_dir():
            target.mkdir(mode=0o755, parents=True, exist_ok=True)
            continue
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        written = 0
        try:
            with archive.open(info) as source, open(target, "xb") as sink:
                while chunk := source.read(_CHUNK):
                    written += len(chunk)
                    total += len(chunk)
                    if written > info.file_size or total > limits.max_total_bytes:
                        findings.append(
                            _finding(
                                "archive-size-mismatch",
                                "member inflates beyond its declared or allowed size",
                                _shown(info.filename),
                            )
                        )
                        break
                    sink.write(chunk)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as e:
            findings.append(
                _finding(
                    "archive-corrupt", f"cannot extract: {type(e).__name__}", _shown(info.filename)
                )
            )
        if findings:
            break
        target.chmod(0o644)
        files += 1
    return ExtractResult(stage=_stage(findings, started), files=files, total_bytes=total)


def _stage(findings: list[Finding], started: float) -> StageResult:
    return StageResult(
        name="archive",
        findings=findings,
        verdict=Verdict.REJECT if findings else Verdict.ALLOW,
        duration_ms=(time.perf_counter() - started) * 1000,
    )

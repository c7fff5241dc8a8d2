"""Static analysis of an extracted upload: semgrep with sless's own rules, plus text checks.

Design and security reasoning:

- semgrep runs as a subprocess from its own environment (its exact pins clash with ours),
  once per upload, with ONLY the rule files in ``rules/`` (no registry, metrics off, no
  version check: there is no network, and an upload is nobody else's business).
- The files to scan are enumerated here and passed as explicit targets. Given a directory,
  semgrep would honour a ``.semgrepignore`` inside the upload (a one-line ``*`` hides every
  file) and its default ignores (``tests/``, ``node_modules/``, ``vendor/``, ``*.min.js``):
  all places a tenant controls. Explicit targets are always scanned. Targets are passed as
  ``./name`` so a file called ``--config=...`` cannot become an option.
- semgrep is time-bounded and runs in its own process group, killed as a group on timeout
  or cancellation. A missing binary, crash, timeout or unparsable output makes the stage
  ``error`` with verdict ``review`` and the reason: never ``allow``. Files semgrep could
  not fully analyse (parse errors, per-file timeouts) are ``review`` findings, since an
  attacker can aim for the parser's blind spots.
- What semgrep cannot see reliably is checked here in Python, reading each file with
  ``O_NOFOLLOW`` and a size cap: Trojan-Source bidi controls (CVE-2021-42574), invisible
  characters in code and payloads hidden in variation selectors or tag characters
  (the 2025 "GlassWorm" npm/VS Code campaign), Python source-encoding tricks
  (``# coding: unicode_escape`` turns escapes in comments into live code), and opaque
  compiled files (``.pyc`` next to a module is imported instead of reviewable source).
- ``--experimental`` selects osemgrep: a 20-file upload scans in ~0.3 s against ~5 s for
  the Python wrapper, and every rule here passes its tests under it (bench/validation.py).
- ``semgrep`` is a Python script that only execs ``semgrep-core`` under the name
  ``osemgrep``; starting Python for that costs ~0.1 s per upload, a quarter of the budget.
  When the wrapper's environment holds ``semgrep-core``, it is run directly under the
  name ``osemgrep`` (a private symlink), which is exactly what the wrapper would exec.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import codecs
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sless.config import ValidationSettings
from sless.validation.report import Finding, StageResult, Verdict

__all__ = [
    "RULES_DIR",
    "resolve_semgrep",
    "run_static",
    "scan_text",
    "semgrep_program",
]

RULES_DIR = Path(__file__).resolve().parent / "rules"

#: where `uv tool install semgrep` puts the binary when ~/.local/bin is not on PATH
_FALLBACK_SEMGREP = Path.home() / ".local" / "bin" / "semgrep"
#: per-file cap for the Python text checks; bigger files get a review finding
_MAX_TEXT_BYTES = 8 * 1024 * 1024
#: findings beyond this many are summarised, so a hostile file cannot flood the report
_MAX_FINDINGS = 500
#: explicit targets per semgrep invocation, to stay far below ARG_MAX
_MAX_ARGV_CHARS = 100_000
_DETAIL_CHARS = 300
_SINGLE_JOB_FILES = 100

_PY_SUFFIXES = frozenset({".py", ".pyw", ".pyi"})
_OPAQUE_SUFFIXES = frozenset(
    {".pyc", ".pyo", ".pyd", ".so", ".dylib", ".dll", ".node", ".exe", ".wasm", ".jar"}
)
_OPAQUE_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\0asm")
#: encodings under which Python source means what a reader (and semgrep) sees
_SAFE_SOURCE_ENCODINGS = frozenset({"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"})
_CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")

# Trojan Source (CVE-2021-42574): embeddings, overrides and isolates reorder what is shown.
_BIDI_RE = re.compile("[\u202a-\u202e\u2066-\u2069]")
# Characters that render as nothing (or as a blank) and so can hide or split identifiers.
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2060-\u2064"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
# A run of tag characters or variation selectors long enough to encode bytes (GlassWorm).
_HIDDEN_PAYLOAD_RE = re.compile("[\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef]{8,}")


@dataclass
class _Collected:
    findings: list[Finding] = field(default_factory=list)
    seen: set[tuple[str, str | None, int | None]] = field(default_factory=set)

    def add(self, finding: Finding) -> None:
        key = (finding.rule, finding.file, finding.line)
        if key not in self.seen:
            self.seen.add(key)
            self.findings.append(finding)


class _StaticError(Exception):
    """semgrep did not produce a usable answer; the message says why (no secrets)."""


def resolve_semgrep(settings: ValidationSettings) -> str | None:
    """The semgrep executable to run, or None.

    A configured path is used as is; a bare name is looked up on PATH and falls back to
    where ``uv tool install`` puts it.
    """
    configured = settings.semgrep_bin
    if os.sep in configured:
        return configured if os.access(configured, os.X_OK) else None
    found = shutil.which(configured)
    if found:
        return found
    if configured == "semgrep" and os.access(_FALLBACK_SEMGREP, os.X_OK):
        return str(_FALLBACK_SEMGREP)
    return None


def semgrep_program(settings: ValidationSettings) -> str | None:
    """What to execute: semgrep-core named ``osemgrep`` when the wrapper's env has it."""
    wrapper = resolve_semgrep(settings)
    if wrapper is None:
        return None
    core = _semgrep_core_beside(wrapper)
    if core is None:
        return wrapper
    return _osemgrep_link(core) or wrapper


@functools.lru_cache(maxsize=8)
def _osemgrep_link(core: str) -> str | None:
    """A symlink called ``osemgrep`` to ``core``, in a private directory of this process.

    semgrep-core picks its behaviour from the name it was started as. A symlink gives it
    that name whatever the event loop's subprocess support does with ``argv[0]`` (uvloop
    replaces it with the executable's path).
    """
    try:
        directory = tempfile.mkdtemp(prefix="sless-semgrep-")
        link = os.path.join(directory, "osemgrep")
        os.symlink(core, link)
    except OSError:
        return None
    atexit.register(shutil.rmtree, directory, True)
    return link


@functools.lru_cache(maxsize=8)
def _semgrep_core_beside(wrapper: str) -> str | None:
    """The ``semgrep-core`` packaged in the environment whose Python runs ``wrapper``.

    The wrapper is a console script whose first line names its environment's interpreter
    (``<env>/bin/python``); the package ships the binary in ``semgrep/bin/``. Anything
    else (a shell script, a binary, an unreadable file) gives None: run the wrapper.
    """
    try:
        with open(wrapper, "rb") as f:
            first = f.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    interpreter = Path(os.fsdecode(first[2:].strip().split(b" ")[0]))
    if interpreter.parent.name != "bin" or not interpreter.name.startswith("python"):
        return None
    pattern = "lib/python3*/site-packages/semgrep/bin/semgrep-core"
    for core in sorted(interpreter.parent.parent.glob(pattern)):
        if os.access(core, os.X_OK):
            return str(core)
    return None


async def run_static(directory: Path, runtime: str, settings: ValidationSettings) -> StageResult:
    """Run semgrep and the text checks over an extracted upload.

    ``runtime`` does not narrow the rules: a Python function can ship JavaScript it runs
    with node (and vice versa), so every rule runs on every file.
    """
    started = time.perf_counter()
    directory, files, unscannable = await asyncio.to_thread(_list_files, directory)
    collected = _Collected()
    for rel in unscannable:
        collected.add(_finding("unscanned-entry", f"not a regular file: {rel}", rel, None))
    text_checks = asyncio.ensure_future(asyncio.to_thread(_scan_all_text, directory, files))
    status: Any = "ok"
    detail: str | None = None
    error = False
    if not settings.static_enabled:
        status, detail = "skipped", "semgrep disabled by settings; text checks ran"
    else:
        try:
            for finding in await _run_semgrep(directory, files, settings):
                collected.add(finding)
        except _StaticError as e:
            status, detail, error = "error", str(e)[:_DETAIL_CHARS], True
        except BaseException:
            text_checks.cancel()
            raise
    for finding in await text_checks:
        collected.add(finding)
    findings = _capped(collected.findings)
    verdict = Verdict.REVIEW if error else Verdict.ALLOW
    for finding in findings:
        verdict = verdict.stricter(finding.severity)
    return StageResult(
        name="static",
        status=status,
        detail=detail,
        findings=findings,
        verdict=verdict,
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _list_files(directory: Path) -> tuple[Path, list[str], list[str]]:
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
            (files if _is_regular(mode) else odd).append(rel)
    return directory, sorted(files), sorted(odd)


def _is_regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


#: which rule folders apply to a file, by suffix; ``any`` (generic rules) always applies.
#: semgrep only runs a language's rules on files it recognises by suffix anyway, so
#: loading only the folders of the languages present changes no result, only start-up.
_LANGUAGE_SUFFIXES = {
    "python": (".py", ".pyw", ".pyi"),
    "javascript": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"),
}


def _rule_dirs(files: list[str] | None) -> list[Path]:
    if files is None:
        return [RULES_DIR]
    dirs = [RULES_DIR / "any"]
    for language, suffixes in _LANGUAGE_SUFFIXES.items():
        if any(f.lower().endswith(suffixes) for f in files):
            dirs.append(RULES_DIR / language)
    return dirs


def _semgrep_command(
    program: str, settings: ValidationSettings, files: list[str] | None = None
) -> list[str]:
    per_file_timeout = max(1, int(settings.semgrep_timeout_s / 4))
    configs = [arg for d in _rule_dirs(files) for arg in ("--config", str(d))]
    return [
        program,
        "scan",
        "--experimental",
        *configs,
        "--json",
        "--quiet",
        "--metrics=off",
        "--disable-version-check",
        "--no-git-ignore",
        # no size filter: a big file is scanned (bounded by the timeouts), never skipped
        "--max-target-bytes=0",
        f"--timeout={per_file_timeout}",
        "--timeout-threshold=0",
    ]


def _batches(files: list[str]) -> list[list[str]]:
    batches: list[list[str]] = [[]]
    size = 0
    for rel in files:
        if size + len(rel) > _MAX_ARGV_CHARS and batches[-1]:
            batches.append([])
            size = 0
        batches[-1].append("./" + rel)
        size += len(rel) + 3
    return [b for b in batches if b]


async def _run_semgrep(
    directory: Path, files: list[str], settings: ValidationSettings
) -> list[Finding]:
    if not files:
        return []
    program = semgrep_program(settings)
    if program is None:
        raise _StaticError(f"semgrep not found ({settings.semgrep_bin!r}); upload not analysed")
    deadline = time.monotonic() + settings.semgrep_timeout_s
    findings: list[Finding] = []
    for batch in _batches(files):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _StaticError(f"semgrep timed out after {settings.semgrep_timeout_s:g}s")
        # one worker for a typical upload: forking workers costs more than it saves
        jobs = ["--jobs=1"] if len(batch) <= _SINGLE_JOB_FILES else []
        command = [*_semgrep_command(program, settings, files), *jobs, "--", *batch]
        out = await _run_bounded(command, directory, remaining, settings.semgrep_timeout_s)
        findings.extend(_parse_semgrep(out, directory))
    return findings


async def _run_bounded(
    command: list[str], cwd: Path, budget_s: float, configured_timeout: float
) -> bytes:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME") or str(Path.home()),
        "LANG": "C.UTF-8",
        "SEMGREP_SEND_METRICS": "off",
        "SEMGREP_ENABLE_VERSION_CHECK": "0",
        # what the wrapper sets when stderr is not a terminal: no ANSI codes in errors
        "NO_COLOR": "1",
    }
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # its own process group, so a timeout kills semgrep and every worker it forked
            start_new_session=True,
        )
    except OSError as e:
        raise _StaticError(f"semgrep could not start: {e.strerror or type(e).__name__}") from e
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), budget_s)
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        raise _StaticError(
            f"semgrep timed out after {configured_timeout:g}s; upload not fully analysed"
        ) from None
    except BaseException:
        _kill_group(proc.pid)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())
        raise
    if proc.returncode != 0:
        raise _StaticError(f"semgrep failed (exit {proc.returncode}): {_reason(stdout, stderr)}")
    return stdout


def _reason(stdout: bytes, stderr: bytes) -> str:
    """The first error semgrep reported, from its JSON if any, else its last stderr line."""
    with contextlib.suppress(ValueError, TypeError, KeyError, IndexError, AttributeError):
        return " ".join(str(json.loads(stdout)["errors"][0]["message"]).split())[:200]
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else "no output"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _parse_semgrep(stdout: bytes, directory: Path) -> list[Finding]:
    try:
        data = json.loads(stdout)
        results = data["results"]
        errors = data.get("errors", [])
        if not isinstance(results, list) or not isinstance(errors, list):
            raise TypeError("results/errors are not lists")
    except (ValueError, KeyError, TypeError) as e:
        raise _StaticError(f"semgrep output unparsable: {type(e).__name__}") from e
    findings: list[Finding] = []
    for result in results:
        try:
            findings.append(_result_finding(result, directory))
        except (KeyError, TypeError, ValueError) as e:
            raise _StaticError(f"semgrep result unparsable: {type(e).__name__}") from e
    for error in errors:
        findings.append(_error_finding(error, directory))
    return findings


def _result_finding(result: dict[str, Any], directory: Path) -> Finding:
    extra = result["extra"]
    metadata = extra.get("metadata") or {}
    verdict = metadata.get("verdict")
    if verdict in ("reject", "review"):
        severity = Verdict(verdict)
    else:
        severity = Verdict.REJECT if extra.get("severity") == "ERROR" else Verdict.REVIEW
    return Finding(
        rule=str(result["check_id"]).rsplit(".", 1)[-1],
        message=" ".join(str(extra.get("message", "")).split()),
        file=_relative(str(result["path"]), directory),
        line=int(result["start"]["line"]),
        source="static",
        severity=severity,
    )


def _error_finding(error: Any, directory: Path) -> Finding:
    if not isinstance(error, dict):
        return _finding("static-scan-incomplete", "semgrep reported an error", None, None)
    kind = error.get("type")
    kind_name = kind[0] if isinstance(kind, list) and kind else str(kind or "error")
    path = error.get("path")
    line = None
    spans = error.get("spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        start = spans[0].get("start")
        if isinstance(start, dict) and isinstance(start.get("line"), int):
            line = start["line"]
    return _finding(
        "static-scan-incomplete",
        f"semgrep could not fully analyse this file ({str(kind_name)[:60]}); "
        "code it could not parse was not checked",
        _relative(path, directory) if isinstance(path, str) else None,
        line,
    )


def _relative(path: str, directory: Path) -> str:
    candidate = Path(path)
    if candidate.is_absolute():
        with contextlib.suppress(ValueError):
            return candidate.relative_to(directory).as_posix()
        return candidate.name
    return candidate.as_posix().removeprefix("./")


def _finding(
    rule: str, message: str, file: str | None, line: int | None, severity: Verdict = Verdict.REVIEW
) -> Finding:
    return Finding(
        rule=rule, message=message, file=file, line=line, source="static", severity=severity
    )


def _capped(findings: list[Finding]) -> list[Finding]:
    if len(findings) <= _MAX_FINDINGS:
        return findings
    kept = sorted(findings, key=lambda f: -f.severity.rank)[:_MAX_FINDINGS]
    worst = kept[0].severity
    kept.append(
        _finding(
            "too-many-findings",
            f"{len(findings) - _MAX_FINDINGS} more findings not listed",
            None,
            None,
            worst,
        )
    )
    return kept


# -- text checks ------------------------------------------------------------------------


def _scan_all_text(directory: Path, files: list[str]) -> list[Finding]:
    findings: list[Finding] = []
    for rel in files:
        data, truncated = _read_capped(directory / rel)
        if data is None:
            findings.append(_finding("unscanned-entry", "could not be read safely", rel, None))
            continue
        findings.extend(scan_text(rel, data))
        if truncated:
            findings.append(
                _finding(
                    "file-too-large",
                    f"larger than {_MAX_TEXT_BYTES} bytes; the rest was not text-checked",
                    rel,
                    None,
                )
            )
    return findings


def _read_capped(path: Path) -> tuple[bytes | None, bool]:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None, False
    try:
        if not _is_regular(os.fstat(fd).st_mode):
            return None, False
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(_MAX_TEXT_BYTES + 1)
    except OSError:
        return None, False
    finally:
        os.close(fd)
    return data[:_MAX_TEXT_BYTES], len(data) > _MAX_TEXT_BYTES


def scan_text(rel: str, data: bytes) -> list[Finding]:
    """The checks semgrep cannot do, on one file's bytes (pure; ``rel`` names the file)."""
    suffix = Path(rel).suffix.lower()
    if suffix in _OPAQUE_SUFFIXES or data.startswith(_OPAQUE_MAGIC):
        return [
            _finding(
                "opaque-binary",
                "compiled or native code (.pyc, .so, .node, executable): it runs but "
                "cannot be reviewed; ship source and declare dependencies instead",
                rel,
                None,
            )
        ]
    if b"\0" in data[:8192]:
        return []  # other binary data (images, archives): nothing here can execute it
    findings: list[Finding] = []
    if suffix in _PY_SUFFIXES:
        findings.extend(_check_python_encoding(rel, data))
    text = data.decode("utf-8", "replace")
    findings.extend(_check_unicode(rel, text))
    findings.extend(_check_encoded_literals(rel, text))
    return findings


# A quoted literal long enough to hide a URL or a path: hex (pairs of digits) or base64.
_HEX_LITERAL_RE = re.compile(r"""["'`]((?:[0-9a-fA-F]{2}){8,})["'`]""")
_B64_LITERAL_RE = re.compile(r"""["'`]([A-Za-z0-9+/_-]{16,}={0,2})["'`]""")
_MAX_LITERALS = 500
_MAX_LITERAL_CHARS = 256 * 1024
#: what no function hides in an encoded string: mining pools, the cloud metadata service,
#: shells wired to sockets, the places credentials live
_ENCODED_INDICATORS = (
    "stratum+tcp://",
    "stratum+ssl://",
    "stratum+tls://",
    "xmrig",
    "169.254.169.254",
    "metadata.google.internal",
    "/dev/tcp/",
    "/bin/sh -i",
    "/bin/bash -i",
    "/var/run/secrets/kubernetes.io",
    "/proc/self/environ",
    ".aws/credentials",
    ".ssh/id_",
)


def _decoded(literal: str, *, hex_digits: bool) -> str | None:
    try:
        if hex_digits:
            raw = bytes.fromhex(literal)
        else:
            padded = literal + "=" * (-len(literal) % 4)
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except ValueError:
        return None
    return raw.decode("latin-1").lower()


def _check_encoded_literals(rel: str, text: str) -> list[Finding]:
    """String literals that decode (hex or base64) to a known indicator: what a rule on
    the plain text cannot see, however the decoding call itself is disguised."""
    found = 0
    for regex, hex_digits in ((_HEX_LITERAL_RE, True), (_B64_LITERAL_RE, False)):
        for match in regex.finditer(text):
            found += 1
            if found > _MAX_LITERALS:
                return []
            literal = match.group(1)
            if len(literal) > _MAX_LITERAL_CHARS:
                continue
            decoded = _decoded(literal, hex_digits=hex_digits)
            if decoded is None:
                continue
            hit = next((i for i in _ENCODED_INDICATORS if i in decoded), None)
            if hit is not None:
                kind = "hex" if hex_digits else "base64"
                return [
                    _finding(
                        "encoded-indicator",
                        f"a {kind} string literal decodes to text containing {hit!r}: "
                        "a mining pool, metadata address, shell or credential path kept "
                        "out of sight",
                        rel,
                        _line_of(text, match.start()),
                        Verdict.REJECT,
                    )
                ]
    return []


def _check_python_encoding(rel: str, data: bytes) -> list[Finding]:
    for number, raw in enumerate(data.splitlines()[:2], start=1):
        match = _CODING_RE.match(raw)
        if match is None:
            continue
        name = match.group(1).decode("ascii", "replace")
        try:
            canonical = codecs.lookup(name).name
        except LookupError:
            canonical = f"unknown codec {name!r}"
        if canonical in _SAFE_SOURCE_ENCODINGS:
            return []
        return [
            _finding(
                "python-source-encoding",
                f"source declares encoding {canonical}: Python decodes the file differently "
                "from what reviewers and scanners read (e.g. unicode_escape turns escapes "
                "in comments into code)",
                rel,
                number,
                Verdict.REJECT,
            )
        ]
    return []


def _check_unicode(rel: str, text: str) -> list[Finding]:
    findings: list[Finding] = []
    payload = _HIDDEN_PAYLOAD_RE.search(text)
    if payload is not None:
        findings.append(
            _finding(
                "unicode-hidden-payload",
                f"{len(payload.group())} consecutive invisible variation-selector/tag "
                "characters: bytes encoded out of sight (GlassWorm-style payload)",
                rel,
                _line_of(text, payload.start()),
                Verdict.REJECT,
            )
        )
    bidi = list(_BIDI_RE.finditer(text))
    if bidi:
        findings.append(
            _finding(
                "unicode-bidi-control",
                f"{len(bidi)} bidirectional control character(s) (first U+"
                f"{ord(bidi[0].group()):04X}): code displays differently from how it runs "
                "(Trojan Source, CVE-2021-42574)",
                rel,
                _line_of(text, bidi[0].start()),
                Verdict.REJECT,
            )
        )
    hidden = [m for m in _INVISIBLE_RE.finditer(text) if _suspicious_invisible(text, m.start())]
    if hidden:
        findings.append(
            _finding(
                "unicode-invisible",
                f"{len(hidden)} invisible character(s) next to code (first U+"
                f"{ord(hidden[0].group()):04X}): identifiers or strings that look identical "
                "but differ",
                rel,
                _line_of(text, hidden[0].start()),
            )
        )
    return findings


def _suspicious_invisible(text: str, index: int) -> bool:
    """Invisible characters inside emoji sequences or non-Latin words are ordinary text."""
    char = text[index]
    if char == "\ufeff" and index == 0:
        return False  # byte-order mark
    before = text[index - 1] if index > 0 else "\n"
    after = text[index + 1] if index + 1 < len(text) else "\n"
    if char in "\ufe0e\ufe0f" or "\U000e0020" <= char <= "\U000e007f":
        # emoji presentation selectors, subdivision-flag tags
        return before.isascii()
    return before.isascii() or after.isascii()


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1

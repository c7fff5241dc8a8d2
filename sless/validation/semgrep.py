"""The semgrep driver: one bounded semgrep run over explicit targets, its JSON as findings.

Design and security reasoning:

- semgrep runs as a subprocess from its own environment (its exact pins clash with ours),
  once per upload, with ONLY the rule files in ``rules/`` (no registry, metrics off, no
  version check: there is no network, and an upload is nobody else's business).
- The files to scan are passed as explicit targets. Given a directory, semgrep would
  honour a ``.semgrepignore`` inside the upload (a one-line ``*`` hides every file) and its
  default ignores (``tests/``, ``node_modules/``, ``vendor/``, ``*.min.js``): all places a
  tenant controls. Explicit targets are always scanned. Targets are passed as ``./name``
  (or an absolute path we made) so a file called ``--config=...`` cannot become an option.
- semgrep is time-bounded and runs in its own process group, killed as a group on timeout
  or cancellation. A missing binary, crash, timeout or unparsable output raises
  :class:`SemgrepError` with the reason; the caller turns it into ``review``, never
  ``allow``. Files semgrep could not fully analyse (parse errors, per-file timeouts) are
  ``review`` findings, since an attacker can aim for the parser's blind spots.
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
import contextlib
import functools
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

from sless.config import ValidationSettings
from sless.tasks import wait_for
from sless.validation.report import Finding, Verdict, static_finding

__all__ = [
    "RULES_DIR",
    "SemgrepError",
    "resolve_semgrep",
    "run_semgrep",
    "semgrep_command",
    "semgrep_env",
    "semgrep_program",
]

RULES_DIR = Path(__file__).resolve().parent / "rules"

#: where `uv tool install semgrep` puts the binary when ~/.local/bin is not on PATH
_FALLBACK_SEMGREP = Path.home() / ".local" / "bin" / "semgrep"
#: explicit targets per semgrep invocation, to stay far below ARG_MAX
_MAX_ARGV_CHARS = 100_000
_SINGLE_JOB_FILES = 100


class SemgrepError(Exception):
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


def semgrep_command(
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
        # "./": a file named "--config=..." stays a path; absolute paths are ours
        batches[-1].append(rel if rel.startswith("/") else "./" + rel)
        size += len(rel) + 3
    return [b for b in batches if b]


async def run_semgrep(
    directory: Path, files: list[str], settings: ValidationSettings
) -> list[Finding]:
    if not files:
        return []
    program = semgrep_program(settings)
    if program is None:
        raise SemgrepError(f"semgrep not found ({settings.semgrep_bin!r}); upload not analysed")
    deadline = time.monotonic() + settings.semgrep_timeout_s
    findings: list[Finding] = []
    for batch in _batches(files):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SemgrepError(f"semgrep timed out after {settings.semgrep_timeout_s:g}s")
        # one worker for a typical upload: forking workers costs more than it saves
        jobs = ["--jobs=1"] if len(batch) <= _SINGLE_JOB_FILES else []
        command = [*semgrep_command(program, settings, files), *jobs, "--", *batch]
        out = await _run_bounded(command, directory, remaining, settings.semgrep_timeout_s)
        findings.extend(_parse_semgrep(out, directory))
    return findings


def semgrep_env() -> dict[str, str]:
    """semgrep's whole environment: no metrics, no version check, nothing else of ours."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME") or str(Path.home()),
        "LANG": "C.UTF-8",
        "SEMGREP_SEND_METRICS": "off",
        "SEMGREP_ENABLE_VERSION_CHECK": "0",
        # what the wrapper sets when stderr is not a terminal: no ANSI codes in errors
        "NO_COLOR": "1",
    }


async def _run_bounded(
    command: list[str], cwd: Path, budget_s: float, configured_timeout: float
) -> bytes:
    try:
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=semgrep_env(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            # its own process group, so a timeout kills semgrep and every worker it forked
            start_new_session=True,
        )
    except OSError as e:
        raise SemgrepError(f"semgrep could not start: {e.strerror or type(e).__name__}") from e
    try:
        stdout, stderr = await wait_for(proc.communicate(), budget_s)
    except TimeoutError:
        _kill_group(proc.pid)
        await proc.wait()
        raise SemgrepError(
            f"semgrep timed out after {configured_timeout:g}s; upload not fully analysed"
        ) from None
    except BaseException:
        _kill_group(proc.pid)
        with contextlib.suppress(BaseException):
            await asyncio.shield(proc.wait())
        raise
    if proc.returncode != 0:
        raise SemgrepError(f"semgrep failed (exit {proc.returncode}): {_reason(stdout, stderr)}")
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
        raise SemgrepError(f"semgrep output unparsable: {type(e).__name__}") from e
    findings: list[Finding] = []
    for result in results:
        try:
            findings.append(_result_finding(result, directory))
        except (KeyError, TypeError, ValueError) as e:
            raise SemgrepError(f"semgrep result unparsable: {type(e).__name__}") from e
    for error in errors:
        findings.append(_error_finding(error, directory))
    return findings


def _result_finding(result: dict[str, Any], directory: Path) -> Finding:
    extra = result["extra"]
    metadata = extra.get("metadata") or {}
    verdict = metadata.get("verdict")
    if verdict in ("reject", "review"):
        severity = Verdict(verdict)
    elif verdict == "note":
        # a weak signal: it only counts together with others (scoring.score)
        severity = Verdict.ALLOW
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
        return static_finding("static-scan-incomplete", "semgrep reported an error", None, None)
    kind = error.get("type")
    kind_name = kind[0] if isinstance(kind, list) and kind else str(kind or "error")
    path = error.get("path")
    line = None
    spans = error.get("spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        start = spans[0].get("start")
        if isinstance(start, dict) and isinstance(start.get("line"), int):
            line = start["line"]
    return static_finding(
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
        # a target outside the upload: one the caller made (a deobfuscated view)
        return candidate.as_posix()
    return candidate.as_posix().removeprefix("./")

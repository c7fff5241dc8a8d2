"""Checks of dependency manifests: what the build would fetch and run before any review.

Pure file reading: no network, no resolver, no package-manager code runs. What is checked
and why:

- ``requirements*.txt`` at the upload root, and files they include with ``-r``/``-c``
  (bounded depth, inside the upload only). URL and VCS requirements (``git+``, ``https://``,
  ``name @ url``) and index options (``--index-url``, ``--extra-index-url``,
  ``--find-links``, ``--trusted-host``) make pip fetch code from a host nobody vetted -
  the dependency-confusion attack (Birsan, 2021) and its kin - so they are rejected.
  Local paths and editable installs build a package from the upload (``setup.py`` runs at
  build time), so they are held for review; paths outside the upload are rejected.
- ``package.json`` at the root: lifecycle scripts that npm runs on install (``preinstall``,
  ``install``, ``postinstall``, ``prepare``, ``prepublish``) are the main vector of npm
  malware (event-stream 2018, ua-parser-js 2021); they are held for review, rejected when
  they fetch, decode or evaluate code. git/http/file/link/GitHub-shorthand dependencies
  bypass the registry and are rejected (local ones inside the upload: review); ``npm:``
  aliases hide the real package name (review). Malformed JSON is held for review.
- Registry overrides shipped as files (``.npmrc``, ``pip.conf``) are rejected.
- What the build will install (``requirements.txt``, ``package.json``, the lockfile) must
  pass ``sless.policies.manifests``, the allowlist the build checks again before any
  installer runs: anything else is rejected here, naming the line, so that an upload that
  could never build is refused now rather than held for review.

Every finding carries the manifest's path and the line of the offending entry.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path, PurePosixPath
from typing import Any

from sless.config import ValidationSettings
from sless.policies.manifests import (
    MANIFEST_FILES,
    MAX_MANIFEST_BYTES,
    check_dependency_manifests,
)
from sless.validation.dependencies import check_dependencies
from sless.validation.report import Finding, StageResult, Verdict, strictest

__all__ = ["check_manifests", "dependency_violations", "read_manifest_files"]

_MAX_MANIFEST_BYTES = 1024 * 1024
_MAX_INCLUDE_DEPTH = 5

_VCS_RE = re.compile(r"^(git|hg|svn|bzr)\+|^git://", re.IGNORECASE)
_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_DIRECT_REF_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*@\s*(?P<url>\S+)")
_NAME_RE = re.compile(
    r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,\s-]*\])?\s*"
    r"((===|==|~=|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*(,\s*(===|==|~=|!=|<=|>=|<|>)\s*"
    r"[A-Za-z0-9.*+!_-]+\s*)*)?(;.*)?$"
)
#: options pip accepts in a requirements file that change nothing about where code comes from
_SAFE_OPTIONS = frozenset(
    {"--pre", "--prefer-binary", "--require-hashes", "--no-binary", "--only-binary", "--hash"}
)
_INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "--trusted-host", "-f", "--find-links"}
)
_INCLUDE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint"})
_EDITABLE_OPTIONS = frozenset({"-e", "--editable"})

_NPM_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepare", "prepublish")
_NPM_DEP_SECTIONS = (
    "dependencies",
    "devDependencies",
    "optionalDependencies",
    "peerDependencies",
    "overrides",
    "resolutions",
)
#: script content that fetches, decodes or evaluates code
_DANGEROUS_SCRIPT_RE = re.compile(
    r"(?i)\b(curl|wget|fetch|https?://|node\s+-e|node\s+--eval|eval|base64|atob|"
    r"/dev/tcp|\|\s*(ba)?sh\b|powershell|child_process|chmod)\b"
)
_GITHUB_SHORTHAND_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(#.*)?$")
_REGISTRY_FILES = (".npmrc", "pip.conf", ".pypirc", ".yarnrc", ".yarnrc.yml", "bunfig.toml")


class _Collector:
    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, rule: str, message: str, file: str, line: int | None, severity: Verdict) -> None:
        self.findings.append(
            Finding(
                rule=rule,
                message=message,
                file=file,
                line=line,
                source="manifest",
                severity=severity,
            )
        )


def read_manifest_files(directory: Path) -> dict[str, str | None]:
    """The text of each of ``MANIFEST_FILES`` at ``directory``'s root that exists (None: a
    symlink, not a regular file, or too large), for ``check_dependency_manifests``."""
    files: dict[str, str | None] = {}
    for name in MANIFEST_FILES:
        path = directory / name
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
            files[name] = None
        else:
            files[name] = path.read_bytes().decode("utf-8", "replace")
    return files


def dependency_violations(directory: Path, registry: str) -> list[str]:
    """What the build would refuse in the manifests at ``directory``'s root, one line each
    (``requirements.txt line 3: ...``)."""
    return [str(v) for v in check_dependency_manifests(read_manifest_files(directory), registry)]


def _policy_findings(root: Path, registry: str, out: _Collector) -> None:
    for violation in check_dependency_manifests(read_manifest_files(root), registry):
        file, _, rest = violation.path.partition(" ")
        line = re.match(r"line (\d+)$", rest)
        out.add(
            "dependency-not-allowed",
            f"{violation.path}: {violation.message}",
            file,
            int(line.group(1)) if line else None,
            Verdict.REJECT,
        )


def check_manifests(directory: Path, registry: str | None = None) -> StageResult:
    """Check the dependency manifests at the root of an extracted upload; ``registry``:
    the npm registry builds install from (``SLESS_VALIDATION_NPM_REGISTRY``)."""
    started = time.perf_counter()
    root = directory.resolve()
    out = _Collector()
    _policy_findings(root, registry or ValidationSettings().npm_registry, out)
    seen: set[Path] = set()
    for path in sorted(root.glob("requirements*.txt")):
        _check_requirements(root, path, out, seen, depth=0)
    package_json = root / "package.json"
    if _is_file(package_json):
        _check_package_json(root, package_json, out)
    for name in _REGISTRY_FILES:
        if _is_file(root / name):
            out.add(
                "registry-config",
                f"{name} in the upload overrides where packages come from or carries "
                "registry credentials; dependencies must come from the platform's registry",
                name,
                1,
                Verdict.REJECT,
            )
    # typo-squatted and desktop-only packages (dependencies.py)
    out.findings.extend(check_dependencies(root))
    return StageResult(
        name="manifest",
        findings=out.findings,
        verdict=strictest(out.findings),
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _is_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _read(path: Path) -> str | None:
    if not _is_file(path) or path.stat().st_size > _MAX_MANIFEST_BYTES:
        return None
    return path.read_bytes().decode("utf-8", "replace")


# -- requirements.txt -------------------------------------------------------------------


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line, content) with continuations joined and comments removed."""
    lines: list[tuple[int, str]] = []
    buffer = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not buffer:
            start = number
        line = raw
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        buffer += line
        content = re.sub(r"(^|\s)#.*$", "", buffer).strip()
        buffer = ""
        if content:
            lines.append((start, content))
    if buffer.strip():
        lines.append((start, buffer.strip()))
    return lines


def _check_requirements(
    root: Path, path: Path, out: _Collector, seen: set[Path], depth: int
) -> None:
    rel = path.relative_to(root).as_posix()
    text = _read(path)
    resolved = path.resolve()
    if text is not None and resolved in seen:
        return
    seen.add(resolved)
    if text is None:
        out.add("requirements-unreadable", "too large or not a file", rel, None, Verdict.REVIEW)
        return
    for line, content in _logical_lines(text):
        _check_requirement_line(root, path, rel, line, content, out, seen, depth)


def _split_option(content: str) -> tuple[str, str]:
    """``-r x``, ``-rx``, ``--requirement=x`` and ``--requirement x`` -> (option, value)."""
    if content.startswith("--"):
        match = re.match(r"(--[A-Za-z0-9-]+)[=\s]*(.*)$", content)
        if match is not None:
            return match.group(1), match.group(2).strip()
        return content, ""
    return content[:2], content[2:].lstrip("= \t")


def _check_requirement_line(
    root: Path,
    path: Path,
    rel: str,
    line: int,
    content: str,
    out: _Collector,
    seen: set[Path],
    depth: int,
) -> None:
    if content.startswith("-"):
        option, value = _split_option(content)
        if option in _INCLUDE_OPTIONS:
            _follow_include(root, path, rel, line, value, out, seen, depth)
        elif option in _INDEX_OPTIONS:
            out.add(
                "requirements-index-override",
                f"{option} {value[:120]}: pip would fetch from (or trust) a host other than "
                "the platform's index (dependency confusion)",
                rel,
                line,
                Verdict.REJECT,
            )
        elif option in _EDITABLE_OPTIONS:
            _check_target(root, path, rel, line, value, out, editable=True)
        elif option not in _SAFE_OPTIONS:
            out.add(
                "requirements-unknown-option",
                f"unrecognised pip option {option[:60]}",
                rel,
                line,
                Verdict.REVIEW,
            )
        return
    if " --hash" in content:
        content = content.split(" --hash", 1)[0].strip()
    direct = _DIRECT_REF_RE.match(content)
    if direct is not None:
        _check_target(root, path, rel, line, direct.group("url"), out, editable=False)
        return
    if _VCS_RE.match(content) or _URL_RE.match(content) or _looks_like_path(content.lower()):
        _check_target(root, path, rel, line, content, out, editable=False)
        return
    if not _NAME_RE.match(content):
        out.add(
            "requirements-unparsable",
            f"not a plain requirement: {content[:120]}",
            rel,
            line,
            Verdict.REVIEW,
        )


def _looks_like_path(value: str) -> bool:
    return value.startswith((".", "/", "~", "file:")) or value.endswith(
        (".whl", ".tar.gz", ".zip", ".tgz")
    )


def _check_target(
    root: Path, path: Path, rel: str, line: int, value: str, out: _Collector, *, editable: bool
) -> None:
    """A requirement given as URL, VCS reference or path (plain or ``-e``)."""
    shown = value[:160]
    if _VCS_RE.match(value) or (_URL_RE.match(value) and not value.startswith("file:")):
        out.add(
            "requirements-url-dependency",
            f"{'editable ' if editable else ''}dependency fetched from {shown}: code from a "
            "host or repository nobody vetted, outside the platform's index",
            rel,
            line,
            Verdict.REJECT,
        )
        return
    local = value.removeprefix("file://").removeprefix("file:")
    inside = _inside(root, path.parent, local)
    if not inside:
        out.add(
            "requirements-path-outside",
            f"local path {shown} points outside the upload",
            rel,
            line,
            Verdict.REJECT,
        )
        return
    out.add(
        "requirements-local-package",
        f"{'editable ' if editable else ''}local package {shown}: its build script runs at "
        "install time; held for review",
        rel,
        line,
        Verdict.REVIEW,
    )


def _inside(root: Path, base: Path, value: str) -> bool:
    if value.startswith(("/", "~")) or not value:
        return False
    candidate = PurePosixPath(value.split("#", 1)[0])
    resolved = (base / candidate).resolve()
    return resolved == root or root in resolved.parents


def _follow_include(
    root: Path,
    path: Path,
    rel: str,
    line: int,
    value: str,
    out: _Collector,
    seen: set[Path],
    depth: int,
) -> None:
    if _URL_RE.match(value) or not _inside(root, path.parent, value):
        out.add(
            "requirements-include-outside",
            f"includes {value[:120]}, which is not a file inside the upload",
            rel,
            line,
            Verdict.REJECT,
        )
        return
    target = (path.parent / value).resolve()
    if depth + 1 > _MAX_INCLUDE_DEPTH:
        out.add(
            "requirements-include-depth",
            f"includes nested deeper than {_MAX_INCLUDE_DEPTH} levels",
            rel,
            line,
            Verdict.REVIEW,
        )
        return
    if not _is_file(target):
        out.add(
            "requirements-include-missing",
            f"includes {value[:120]}, which does not exist",
            rel,
            line,
            Verdict.REVIEW,
        )
        return
    _check_requirements(root, target, out, seen, depth + 1)


# -- package.json -----------------------------------------------------------------------


def _check_package_json(root: Path, path: Path, out: _Collector) -> None:
    rel = path.relative_to(root).as_posix()
    text = _read(path)
    data: Any
    try:
        if text is None:
            raise ValueError("too large")
        data = json.loads(text)
    except ValueError as e:
        line = getattr(e, "lineno", None)
        out.add("package-json-malformed", f"not valid JSON: {e}", rel, line, Verdict.REVIEW)
        return
    if not isinstance(data, dict):
        out.add("package-json-malformed", "not a JSON object", rel, 1, Verdict.REVIEW)
        return
    scripts = data.get("scripts")
    if isinstance(scripts, dict):
        for name in _NPM_INSTALL_SCRIPTS:
            if name not in scripts:
                continue
            command = str(scripts[name])
            dangerous = _DANGEROUS_SCRIPT_RE.search(command) is not None
            out.add(
                "npm-install-script",
                f"scripts.{name} runs at install time: {command[:160]!r}"
                + ("; it fetches, decodes or evaluates code" if dangerous else ""),
                rel,
                _json_line(text or "", "scripts", name),
                Verdict.REJECT if dangerous else Verdict.REVIEW,
            )
    for section in _NPM_DEP_SECTIONS:
        deps = data.get(section)
        if isinstance(deps, dict):
            for name, spec in deps.items():
                if isinstance(spec, str):
                    _check_npm_spec(root, rel, text or "", section, name, spec, out)


def _check_npm_spec(
    root: Path, rel: str, text: str, section: str, name: str, spec: str, out: _Collector
) -> None:
    value = spec.strip()
    lowered = value.lower()
    line = _json_line(text, section, name)
    where = f"{section}.{name} = {value[:120]!r}"
    if lowered.startswith(("file:", "link:", "portal:")):
        local = value.split(":", 1)[1]
        if _inside(root, root, local):
            out.add(
                "npm-local-dependency",
                f"{where}: a local package whose install scripts run at build time",
                rel,
                line,
                Verdict.REVIEW,
            )
        else:
            out.add(
                "npm-path-outside",
                f"{where} points outside the upload",
                rel,
                line,
                Verdict.REJECT,
            )
        return
    if lowered.startswith(("git+", "git:", "github:", "gitlab:", "bitbucket:", "gist:")) or (
        _URL_RE.match(value) is not None
    ):
        out.add(
            "npm-url-dependency",
            f"{where}: fetched from a repository or URL, bypassing the registry",
            rel,
            line,
            Verdict.REJECT,
        )
        return
    if _GITHUB_SHORTHAND_RE.match(value):
        out.add(
            "npm-url-dependency",
            f"{where}: GitHub shorthand, fetched from a repository bypassing the registry",
            rel,
            line,
            Verdict.REJECT,
        )
        return
    if lowered.startswith("npm:"):
        out.add(
            "npm-alias-dependency",
            f"{where}: an alias installs a different package under this name",
            rel,
            line,
            Verdict.REVIEW,
        )


def _json_line(text: str, section: str, key: str) -> int | None:
    """Line of ``"key":`` inside the object that follows ``"section":`` (first match)."""
    start = re.search(re.escape(json.dumps(section)) + r"\s*:", text)
    if start is None:
        return None
    entry = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, start.end())
    if entry is None:
        return text.count("\n", 0, start.start()) + 1
    return text.count("\n", 0, entry.start()) + 1

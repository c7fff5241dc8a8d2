"""What a dependency manifest may ask of the build: an allowlist, checked at upload and
again right before any installer runs (both modes).

A requirements.txt or package.json is a program for uv or npm, which run on the build
host: an option line reads a host file (``-r /etc/shadow``; the installer's error then
quotes its lines), a URL, path or VCS requirement fetches from a host the tenant chooses
(``pkg @ http://127.0.0.1:PORT/``, ``--index-url``, ``file:``, ``git+``, GitHub
shorthand), a lockfile's ``resolved`` URL is fetched as written. Each is a way out of "the
build installs registry packages, nothing else" (CWE-918 server-side request forgery,
CWE-73 external control of a file name; the dependency-confusion attacks, Birsan 2021).
So only what names a registry package is allowed, and everything else is refused with the
line (or JSON path) that asked for it:

- ``requirements.txt``: lines ``name[extras] <version spec> ; <markers>`` (PEP 508 without
  a URL), each optionally followed by ``--hash=<algo>:<hex>`` (hash pinning only narrows
  what is accepted); comments, blank lines and ``\\`` continuations; the flag lines
  ``--pre``, ``--prefer-binary`` and ``--require-hashes`` (no value). No other option line,
  no ``@``, ``/``, ``:``, ``$`` (variable expansion) or archive file name anywhere.
- ``package.json``: every dependency map (``dependencies``, ``devDependencies``,
  ``optionalDependencies``, ``peerDependencies``, ``overrides``) holds registry specs
  only: a semver range, a dist-tag, or ``npm:<name>@<range>``; overrides may also say
  ``$name``. ``workspaces`` and ``bundleDependencies`` are refused (local packages).
  Scripts are not checked here: npm runs with ``--ignore-scripts``.
- ``package-lock.json`` / ``npm-shrinkwrap.json`` (lockfileVersion 2 or 3): every package
  lives under ``node_modules/``, is no ``link``, and is ``resolved`` (if at all) under the
  configured registry URL; every dependency map in it holds registry specs only.
- Installer configuration files (``.npmrc``, ``pip.conf``, ``uv.toml``, ...) are refused:
  the registry and the install options are the platform's.

Pure: text in, ``Violation`` list out (no I/O), so that the upload, the embedded build and
the Kubernetes build context call the same function.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from sless.policies.violations import Violation

__all__ = [
    "CONFIG_FILES",
    "MANIFEST_FILES",
    "check_dependency_manifests",
    "check_package_json",
    "check_package_lock",
    "check_requirements",
    "registry_spec",
]

REQUIREMENTS = "requirements.txt"
PACKAGE_JSON = "package.json"
LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")
#: installer configuration: where packages come from and how they install is the platform's
CONFIG_FILES = (
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    "bunfig.toml",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    "uv.toml",
    ".piprc",
)
#: the files a caller reads (at the upload's root) and hands to ``check_dependency_manifests``
MANIFEST_FILES = (REQUIREMENTS, PACKAGE_JSON, *LOCKFILES, *CONFIG_FILES)
MAX_MANIFEST_BYTES = 1024 * 1024
_SHOWN = 120

# -- requirements.txt ---------------------------------------------------------------------

_PY_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_PY_VERSION = r"[A-Za-z0-9.*+!_-]+"
_PY_CLAUSE = rf"(?:===|==|~=|!=|<=|>=|<|>)\s*{_PY_VERSION}"
_PY_SPEC = rf"{_PY_CLAUSE}(?:\s*,\s*{_PY_CLAUSE})*"
#: PEP 508 marker text: names, quoted literals, comparisons, parentheses; nothing that can
#: spell a URL or a path (no ``/`` ``:`` ``@`` ``$`` ``\\``)
_PY_MARKERS = r"[A-Za-z0-9_ .'\"()<>=!~,*+-]+"
_REQUIREMENT_RE = re.compile(
    rf"^(?P<name>{_PY_NAME})\s*"
    rf"(?:\[\s*{_PY_NAME}(?:\s*,\s*{_PY_NAME})*\s*\])?\s*"
    rf"(?:{_PY_SPEC}|\(\s*{_PY_SPEC}\s*\))?\s*"
    rf"(?:;\s*{_PY_MARKERS})?$"
)
_HASH_RE = re.compile(r"\s+--hash[=\s]\s*(?:sha256|sha384|sha512):[0-9a-fA-F]+(?=\s|$)")
#: option lines that take no value, so name no file and no host: allowed
_FLAG_LINES = frozenset({"--pre", "--prefer-binary", "--require-hashes"})
#: a name pip or uv would take for a local archive or wheel file
_ARCHIVE_RE = re.compile(r"\.(whl|zip|tar|tgz|tbz|txz|tlz|tar\.\w+)$", re.IGNORECASE)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line, content): ``\\`` continuations joined, comments dropped (a
    ``#`` at the start or after whitespace, as pip and uv read them)."""
    out: list[tuple[int, str]] = []
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not buffer:
            start = number
        if raw.endswith("\\"):
            buffer += raw[:-1]
            continue
        content = re.sub(r"(^|\s)#.*$", "", buffer + raw).strip()
        buffer = ""
        if content:
            out.append((start, content))
    if buffer.strip():
        out.append((start, buffer.strip()))
    return out


def check_requirements(text: str, file: str = REQUIREMENTS) -> list[Violation]:
    """Every line of ``text`` that is not a plain registry requirement."""
    out: list[Violation] = []
    for number, content in _logical_lines(text):
        shown = repr(content[:_SHOWN])
        where = f"{file} line {number}"
        requirement = _HASH_RE.sub("", content).strip()
        if requirement in _FLAG_LINES:
            continue
        if requirement.startswith("-"):
            reason = "installer options are not allowed (they read files or pick the index)"
        elif match := _REQUIREMENT_RE.match(requirement):
            if not _ARCHIVE_RE.search(match.group("name")):
                continue
            reason = "a local archive, not a package name"
        else:
            reason = (
                "only 'name[extras] <version spec> ; <markers>' lines are allowed "
                "(no URL, path or option)"
            )
        out.append(Violation(where, f"{shown}: {reason}"))
    return out


# -- package.json -------------------------------------------------------------------------

_NPM_NAME_RE = re.compile(r"^(?:@[a-z0-9-~][a-z0-9-._~]*/)?[a-z0-9-~][a-z0-9-._~]*$")
_SEMVER_PART = r"(?:\d+|[xX*])"
_SEMVER_IDS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
_SEMVER_PARTIAL = (
    rf"v?{_SEMVER_PART}(?:\.{_SEMVER_PART}(?:\.{_SEMVER_PART})?)?"
    rf"(?:-?{_SEMVER_IDS})?(?:\+{_SEMVER_IDS})?"
)
_SEMVER_COMPARATOR = rf"(?:\^|~>?|[<>]=?|=)?\s*{_SEMVER_PARTIAL}"
_SEMVER_SET = (
    rf"(?:{_SEMVER_PARTIAL}\s+-\s+{_SEMVER_PARTIAL}"
    rf"|{_SEMVER_COMPARATOR}(?:\s+{_SEMVER_COMPARATOR})*)"
)
_SEMVER_RANGE_RE = re.compile(rf"^\s*(?:{_SEMVER_SET})?\s*(?:\|\|\s*(?:{_SEMVER_SET})?\s*)*$")
#: a dist-tag (``latest``, ``next``): no dot, slash or colon, so never a path, a file
#: name or a URL to npm
_DIST_TAG_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: what npm takes for a local tarball whatever else the spec looks like
_TARBALL_RE = re.compile(r"\.(tgz|tar|tar\.gz)$", re.IGNORECASE)
_MAX_SPEC = 256
_DEPENDENCY_MAPS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_LOCAL_FIELDS = ("workspaces", "bundleDependencies", "bundledDependencies")


def registry_spec(spec: str, *, override: bool = False) -> bool:
    """Whether npm resolves ``spec`` from the registry: a semver range, a dist-tag,
    ``npm:<name>@<range>`` (an alias), or in ``overrides`` a ``$name`` reference."""
    if len(spec) > _MAX_SPEC or _TARBALL_RE.search(spec.strip()):
        return False
    if _SEMVER_RANGE_RE.match(spec) or _DIST_TAG_RE.match(spec):
        return True
    if override and spec.startswith("$") and _NPM_NAME_RE.match(spec[1:]):
        return True
    if spec.startswith("npm:"):
        name, at, version = spec[4:].rpartition("@")
        if not at:
            name, version = spec[4:], ""
        return bool(_NPM_NAME_RE.match(name)) and registry_spec(version)
    return False


def _check_dependency_map(
    value: object, path: str, out: list[Violation], *, override: bool = False
) -> None:
    if not isinstance(value, dict):
        out.append(Violation(path, "must be an object of name: version range"))
        return
    for name, spec in value.items():
        where = f"{path}.{name}"
        if override and isinstance(spec, dict):
            _check_dependency_map(spec, where, out, override=True)
            continue
        if not isinstance(spec, str):
            out.append(Violation(where, "must be a version range"))
        elif not registry_spec(spec, override=override):
            out.append(
                Violation(
                    where,
                    f"{spec[:_SHOWN]!r} is not a registry version range or tag (no path, "
                    "URL, git or GitHub dependency: packages come from the platform's registry)",
                )
            )


def _load_object(text: str, file: str, out: list[Violation]) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except ValueError as e:
        out.append(Violation(file, f"not valid JSON: {str(e)[:_SHOWN]}"))
        return None
    if not isinstance(data, dict):
        out.append(Violation(file, "not a JSON object"))
        return None
    return data


def _check_package_fields(data: Mapping[str, Any], path: str, out: list[Violation]) -> None:
    for section in _DEPENDENCY_MAPS:
        if section in data:
            _check_dependency_map(data[section], f"{path}{section}", out)
    for section in _LOCAL_FIELDS:
        if data.get(section):
            out.append(Violation(f"{path}{section}", "local packages are not allowed"))


def check_package_json(text: str, file: str = PACKAGE_JSON) -> list[Violation]:
    out: list[Violation] = []
    data = _load_object(text, file, out)
    if data is None:
        return out
    _check_package_fields(data, f"{file} ", out)
    if "overrides" in data:
        _check_dependency_map(data["overrides"], f"{file} overrides", out, override=True)
    return out


# -- package-lock.json --------------------------------------------------------------------

_LOCK_KEY_RE = re.compile(r"^(?:node_modules/(?:@[^/]+/)?[^/]+/)*node_modules/(?:@[^/]+/)?[^/]+$")
_EXACT_VERSION_RE = re.compile(rf"^{_SEMVER_PARTIAL}$")


def _resolved_ok(resolved: object, registry: str) -> bool:
    base = registry.rstrip("/") + "/"
    return isinstance(resolved, str) and resolved.startswith(base) and ".." not in resolved


def _check_locked(
    entry: object, where: str, registry: str, out: list[Violation], *, legacy: bool
) -> None:
    if not isinstance(entry, dict):
        out.append(Violation(where, "must be an object"))
        return
    if entry.get("link"):
        out.append(Violation(where, "a link to a local directory is not allowed"))
    if "resolved" in entry and not _resolved_ok(entry["resolved"], registry):
        shown = str(entry["resolved"])[:_SHOWN]
        out.append(Violation(where, f"resolved {shown!r} is not on the registry {registry}"))
    version = entry.get("version")
    if version is not None and not (
        isinstance(version, str)
        and (_EXACT_VERSION_RE.match(version) or (legacy and registry_spec(version)))
    ):
        out.append(Violation(where, f"version {str(version)[:_SHOWN]!r} is not a registry version"))
    _check_package_fields(entry, f"{where} ", out)
    if legacy:
        if "requires" in entry:
            _check_dependency_map(entry["requires"], f"{where} requires", out)
        nested = entry.get("dependencies")
        if isinstance(nested, dict):
            for name, child in nested.items():
                _check_locked(child, f"{where}/{name}", registry, out, legacy=True)


def check_package_lock(text: str, registry: str, file: str = LOCKFILES[0]) -> list[Violation]:
    """A lockfile npm may install from: every package from ``registry``, none local."""
    out: list[Violation] = []
    data = _load_object(text, file, out)
    if data is None:
        return out
    if data.get("lockfileVersion") not in (2, 3):
        out.append(Violation(f"{file} lockfileVersion", "must be 2 or 3 (npm 7 or later)"))
        return out
    packages = data.get("packages", {})
    if not isinstance(packages, dict):
        return [*out, Violation(f"{file} packages", "must be an object")]
    for key, entry in packages.items():
        where = f"{file} packages[{key!r}]"
        if key == "":
            if isinstance(entry, dict):
                _check_package_fields(entry, f"{where} ", out)
            continue
        if not _LOCK_KEY_RE.match(key) or ".." in key.split("/"):
            out.append(Violation(where, "a package outside node_modules (a local package)"))
            continue
        _check_locked(entry, f"{file} {key}", registry, out, legacy=False)
    legacy = data.get("dependencies", {})
    if isinstance(legacy, dict):  # the npm 6 section a version 2 lockfile also carries
        for name, entry in legacy.items():
            _check_locked(entry, f"{file} dependencies/{name}", registry, out, legacy=True)
    return out


# -- all of an upload ---------------------------------------------------------------------


def check_dependency_manifests(files: Mapping[str, str | None], registry: str) -> list[Violation]:
    """Every violation in the manifests at an upload's root: ``files`` maps each name of
    ``MANIFEST_FILES`` present to its text (None: not a regular file, or too large)."""
    out: list[Violation] = []
    for name, text in files.items():
        if name in CONFIG_FILES:
            out.append(
                Violation(
                    name,
                    "installer configuration in the upload is not allowed: the registry "
                    "and install options are the platform's",
                )
            )
        elif name not in MANIFEST_FILES:
            continue
        elif text is None:
            out.append(
                Violation(name, f"must be a regular file of at most {MAX_MANIFEST_BYTES} bytes")
            )
        elif name == REQUIREMENTS:
            out.extend(check_requirements(text, name))
        elif name == PACKAGE_JSON:
            out.extend(check_package_json(text, name))
        else:
            out.extend(check_package_lock(text, registry, name))
    return out

"""Declared dependencies that a function should not need, or that imitate one it might.

- **Typosquatting.** Most malicious PyPI and npm packages are published under a name one
  keystroke from a popular one (``reqeusts``, ``python3-dateutil``, ``crossenv``; the
  2017 PyPI and 2018 npm takedowns, and every year since). A declared name that is not
  itself in the shipped top lists (``data/pypi-top.txt``, ``data/npm-top.txt``) but is
  one edit (insertion, deletion, substitution or swap of neighbours) from a name that is,
  is held for review.
- **Capabilities a handler has no use for.** Clipboard, keyboard, mouse and
  screen-capture packages only make sense on a desktop: clippers and keyloggers pull
  them in. Declaring one is held for review (importing one is rejected by the rules).

Names are normalised as the registries do (PEP 503 for PyPI: case and ``-_.`` runs; npm
names are case-sensitive but lower-case in practice). Pure file reading.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

from sless.validation.report import Finding, Verdict

__all__ = ["check_dependencies", "near_miss"]

_DATA = Path(__file__).resolve().parent / "data"
_MAX_BYTES = 1024 * 1024
#: names shorter than this are too dense in name space for an edit distance to mean much
_MIN_NAME = 4
_REQUIREMENT_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_NPM_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")

_DESKTOP_ONLY_PYPI = frozenset(
    {
        "pyperclip", "pynput", "keyboard", "mouse", "pyautogui", "mss", "pyscreenshot",
        "clipboard", "xerox", "pyxhook", "pyhook", "pywinauto", "klembord", "pasteboard",
    }
)  # fmt: skip
_DESKTOP_ONLY_NPM = frozenset(
    {
        "clipboardy", "copy-paste", "node-copy-paste", "clipboard-event", "robotjs",
        "@jitsi/robotjs", "iohook", "uiohook-napi", "node-global-key-listener",
        "node-key-sender", "screenshot-desktop", "node-screenshots", "desktop-screenshot",
    }
)  # fmt: skip


def _normalise_pypi(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def _top(registry: str) -> frozenset[str]:
    lines = (_DATA / f"{registry}-top.txt").read_text(encoding="utf-8").splitlines()
    names = (line.strip() for line in lines if line.strip() and not line.startswith("#"))
    if registry == "pypi":
        return frozenset(_normalise_pypi(n) for n in names)
    return frozenset(n.lower() for n in names)


def near_miss(name: str, registry: str) -> str | None:
    """The popular name ``name`` is one edit away from, unless it is popular itself."""
    top = _top(registry)
    key = _normalise_pypi(name) if registry == "pypi" else name.lower()
    if key in top or len(key) < _MIN_NAME:
        return None
    for candidate in sorted(top):
        if abs(len(candidate) - len(key)) <= 1 and _one_edit(key, candidate):
            return candidate
    return None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by exactly one insertion, deletion, substitution or
    swap of neighbouring characters (optimal string alignment distance 1)."""
    if a == b:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and a[diffs[0]] == b[diffs[1]]
            and a[diffs[1]] == b[diffs[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def check_dependencies(root: Path) -> list[Finding]:
    """Findings for the dependencies declared at the root of an upload."""
    findings: list[Finding] = []
    for path in sorted(root.glob("requirements*.txt")):
        for line_no, name in _requirement_names(path):
            findings.extend(_judge(name, "pypi", path.name, line_no))
    package_json = root / "package.json"
    for line_no, name in _npm_names(package_json):
        findings.extend(_judge(name, "npm", package_json.name, line_no))
    return findings


def _judge(name: str, registry: str, file: str, line: int | None) -> list[Finding]:
    desktop = _DESKTOP_ONLY_PYPI if registry == "pypi" else _DESKTOP_ONLY_NPM
    key = _normalise_pypi(name) if registry == "pypi" else name.lower()
    if key in desktop:
        return [
            _finding(
                "desktop-only-dependency",
                f"{name!r} reads the clipboard, keyboard, mouse or screen: a server-side "
                "handler has none, clippers and keyloggers do",
                file,
                line,
            )
        ]
    popular = near_miss(name, registry)
    if popular is None:
        return []
    return [
        _finding(
            "typosquat-dependency",
            f"{name!r} is one keystroke from the popular {registry} package {popular!r}: "
            "look-alike names are how most malicious packages get installed",
            file,
            line,
        )
    ]


def _finding(rule: str, message: str, file: str, line: int | None) -> Finding:
    return Finding(
        rule=rule, message=message, file=file, line=line, source="manifest", severity=Verdict.REVIEW
    )


def _read(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _requirement_names(path: Path) -> list[tuple[int, str]]:
    text = _read(path)
    if text is None:
        return []
    names = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("-", "#")):
            continue
        match = _REQUIREMENT_RE.match(line)
        # a URL, VCS or path requirement names no registry package (manifests.py rules)
        if match and line[match.end() : match.end() + 1] not in (":", "+", "/"):
            names.append((number, match.group(1)))
    return names


def _npm_names(path: Path) -> list[tuple[int, str]]:
    text = _read(path)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []  # the manifest check reports malformed JSON
    if not isinstance(data, dict):
        return []
    names = []
    lines = text.splitlines()
    for section in _NPM_SECTIONS:
        deps = data.get(section)
        if not isinstance(deps, dict):
            continue
        for name in deps:
            if isinstance(name, str):
                needle = json.dumps(name)
                line = next((i for i, text in enumerate(lines, 1) if needle in text), None)
                names.append((line or 1, name))
    return names

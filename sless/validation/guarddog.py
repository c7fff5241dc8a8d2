"""GuardDog's maintained source-code rules, run in-process with yara-python.

Design and security reasoning:

- The rules are GuardDog's own YARA files (``guarddog/analyzer/sourcecode/*.yar`` in the
  installed PyPI package ``guarddog``), found on disk without importing ``guarddog``:
  importing it starts its metadata heuristics, which download typosquatting lists, and
  nothing here may reach the network. They are never copied into this repository: they
  are updated by upgrading the package, and the version (:func:`version`) is recorded in
  every report and is part of the analysis fingerprint, so an upgrade re-validates.
- They are compiled once per process, one namespace per rule file; each file of the
  upload (read with the text checks' size cap, without following links) is matched in
  memory. A rule's ``path_include`` meta, as GuardDog applies it, limits it to the files
  it was written for; a match on a line that is wholly a comment is dropped, as GuardDog
  does (code in a comment does not run).
- Policy by behaviour class (:func:`severity`): a ``threat-*`` rule holds the upload for
  review, a ``capability-*`` rule is a note (shown, no effect on the verdict, not a weak
  signal of :mod:`sless.validation.scoring`), except the threat rules in
  :data:`_BENIGN_THREATS` and the matches of :data:`_MESSENGER_API`, whose behaviour
  ordinary functions have (each with its reason).
- A missing package or a rule that does not compile raises :class:`GuardDogError`; the
  static stage then fails closed (review), never allow.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import importlib.metadata
import importlib.util
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yara

from sless.validation.report import Finding, Verdict, static_finding
from sless.validation.text_checks import read_capped

__all__ = ["GuardDogError", "fingerprint", "scan_files", "scan_text", "severity", "version"]

_PACKAGE = "guarddog"
_EVIDENCE_CHARS = 120
#: matches kept per rule and file (GuardDog keeps at most a few of a rule, too)
_MAX_PER_RULE = 3

#: threat rules whose behaviour every ordinary function may have: shown, not held
_BENIGN_THREATS = {
    # reading an API key or token from the environment is how a function gets the
    # secrets its spec declares (sless injects them as environment variables)
    "threat-runtime-environment-read": "functions read their declared secrets from the environment",
    # hostname / platform / user lookups are what logging and metrics libraries do; sending
    # them out is its own rule (threat-network-exfil-sysinfo), which stays a review
    "threat-runtime-system-info": "reading the hostname or platform is ordinary",
    # a subprocess with its output discarded is ordinary; what it runs is judged by the
    # process rules and by our own semgrep rules
    "threat-process-spawn-silent": "a quiet subprocess is ordinary",
    # a messenger's API (a Telegram bot's sendMessage, a token) is what bots and notifiers
    # call; where a function may send is its declared egress, enforced at run time, the
    # detonation catches data leaving to any host, and a hard-coded chat webhook is our
    # own rule (any-hardcoded-chat-webhook, a review)
    "threat-network-exfil-messenger": "bots and notifiers call a messenger's API",
}
#: ... and the matches of the destination rules (threat-network-exfiltration,
#: -outbound-shady-links) that name a messenger's API, for the same reason; their request
#: catchers, tunnels, paste sites and bare IP addresses stay a review
_MESSENGER_API = re.compile(rb"api\.telegram\.org|discord(app)?\.com/api/webhooks", re.I)
_MESSENGER_NOTE = "bots and notifiers call a messenger's API"


class GuardDogError(Exception):
    """GuardDog's rules could not be found or compiled."""


def _rules_dir() -> Path:
    spec = importlib.util.find_spec(_PACKAGE)  # finds it without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise GuardDogError(f"the {_PACKAGE} package is not installed")
    rules = Path(next(iter(spec.submodule_search_locations))) / "analyzer" / "sourcecode"
    if not any(rules.glob("*.yar")):
        raise GuardDogError(f"no GuardDog rules in {rules}")
    return rules


@functools.cache
def version() -> str:
    """The installed GuardDog version (recorded in each report)."""
    try:
        return importlib.metadata.version(_PACKAGE)
    except importlib.metadata.PackageNotFoundError as e:
        raise GuardDogError(f"the {_PACKAGE} package is not installed") from e


@functools.cache
def fingerprint() -> str:
    """The version and a digest of every rule file: a cached result made under others is stale."""
    digest = hashlib.sha256(f"guarddog={version()}".encode())
    rules = _rules_dir()
    for path in sorted(rules.iterdir()):
        if path.suffix in (".yar", ".meta"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def _compiled() -> Any:
    rules = _rules_dir()
    try:
        return yara.compile(filepaths={p.stem: str(p) for p in sorted(rules.glob("*.yar"))})
    except yara.Error as e:
        raise GuardDogError(f"GuardDog's rules do not compile: {e}") from e


def severity(rule_file: str, matched: bytes = b"") -> Verdict:
    """What a match of ``rule_file`` (``threat-…`` or ``capability-…``) makes of the upload."""
    if _note_reason(rule_file, matched) is None and rule_file.startswith("threat-"):
        return Verdict.REVIEW
    return Verdict.ALLOW


def _note_reason(rule_file: str, matched: bytes) -> str | None:
    """Why a threat rule's match is only a note, if it is."""
    if rule_file in _BENIGN_THREATS:
        return _BENIGN_THREATS[rule_file]
    if rule_file.startswith("threat-network-") and _MESSENGER_API.search(matched):
        return _MESSENGER_NOTE
    return None


def _applies(meta: dict[str, Any], rel: str) -> bool:
    # a pattern is tried on the path and on the file name: a ``setup.py`` rule also reads
    # a setup.py in a sub-folder (stricter than GuardDog, which reads the root one)
    name = PurePosixPath(rel).name
    patterns = [p.strip() for p in str(meta.get("path_include") or "").split(",") if p.strip()]
    if patterns and not any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in patterns):
        return False
    excluded = [p.strip() for p in str(meta.get("path_exclude") or "").split(",") if p.strip()]
    return not any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) for p in excluded)


def _in_comment(data: bytes, offset: int) -> bool:
    start = data.rfind(b"\n", 0, offset) + 1
    end = data.find(b"\n", offset)
    line = data[start : end if end >= 0 else len(data)].lstrip()
    return line.startswith((b"#", b"//"))


def scan_text(rel: str, data: bytes) -> list[Finding]:
    """GuardDog's findings on one file's bytes (``rel`` names the file)."""
    findings: list[Finding] = []
    for match in _compiled().match(data=data):
        if not _applies(match.meta, rel):
            continue
        lines: set[int] = set()
        for string in match.strings:
            for instance in string.instances:
                # a match may begin with the line break before the code it is about
                matched: bytes = instance.matched_data
                offset = instance.offset + len(matched) - len(matched.lstrip(b"\r\n"))
                if len(lines) >= _MAX_PER_RULE or _in_comment(data, offset):
                    continue
                line = data.count(b"\n", 0, offset) + 1
                if line in lines:
                    continue
                lines.add(line)
                findings.append(_finding(match, rel, line, matched.strip()))
    return findings


def _finding(match: Any, rel: str, line: int, matched: bytes) -> Finding:
    rule_file: str = match.namespace
    message = str(match.meta.get("description") or f"{match.rule} matched")
    reason = _note_reason(rule_file, matched) if rule_file.startswith("threat-") else None
    if reason:
        message = f"{message} (a note: {reason})"
    found = static_finding(
        f"guarddog-{rule_file}", f"GuardDog: {message}", rel, line, severity(rule_file, matched)
    )
    found.evidence = matched[:_EVIDENCE_CHARS].decode("utf-8", "replace")
    return found


def scan_files(directory: Path, files: list[str]) -> list[Finding]:
    """GuardDog's findings on ``files`` (relative to ``directory``; capped reads)."""
    _compiled()  # raises GuardDogError before any file is read
    findings: list[Finding] = []
    for rel in files:
        data, _truncated = read_capped(directory / rel)
        if data:  # unreadable files are reported by the text checks
            findings.extend(scan_text(rel, data))
    return findings

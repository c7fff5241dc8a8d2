"""Judging what a detonation recorded: which behaviour is evidence and which is a note.

The policy is by behaviour class, in one place (docs/VALIDATION.md, "Verdicts"):

- **reject**: a canary reached the sink, except a declared secret sent to a declared host.
- **review**: behaviour that has no ordinary place in a function, whatever it is for: a
  connection to an address no name was looked up for, a DNS name that carries data (in
  Kubernetes DNS leaves whatever the egress), a credential file read, a startup file
  written, a file written outside the sandbox's scratch space, and a process that runs
  code given as text (a shell command line, ``python -c``, ``node -e``), a program or
  script from a writable location (downloaded or written at run time), a detached
  process, or a fork of the interpreter.
- **note** (severity ``allow``, kept in the report with its evidence and given to the LLM
  reviewer): behaviour that benign functions have too. A named host the spec's ``egress``
  does not declare is one: the sandbox and the NetworkPolicies block it when the function
  serves (``egress`` empty = no network), so without a canary in it, it shows only what
  the code would try. A program started with an argument list (``git --version``,
  ``ffmpeg``) is another; the static stage weighs the same thing as a weak signal.
"""

from __future__ import annotations

import base64
import json
import math
import posixpath
from typing import Any

from sless.validation.canaries import Canaries
from sless.validation.report import Finding, Verdict

__all__ = ["judge", "unique"]

_EVIDENCE_BYTES = 400
#: where the sandbox may write without it being worth a look (its own tmpfs, /dev/null)
_SCRATCH = ("/tmp", "/dev")  # noqa: S108
_STARTUP_SUFFIXES = (".pth", "sitecustomize.py", "usercustomize.py", ".bashrc", ".profile")
#: places a program can only be in because the code put it there at run time
_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/user")  # noqa: S108
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ash", "ksh", "busybox", "fish", "csh"})
_INTERPRETERS = ("python", "node", "perl", "ruby", "php", "lua", "deno", "bun")
_INLINE_FLAGS = frozenset({"-c", "-e", "-E", "--eval", "-p", "--print", "-r"})
_DETACHERS = frozenset({"nohup", "setsid", "disown", "daemonize", "start-stop-daemon"})
#: programs whose program is text (awk's first argument is code)
_TEXT_PROGRAMS = frozenset({"awk", "gawk", "mawk", "nawk"})
#: programs that run the program named in their arguments
_LAUNCHERS = frozenset({"env", "nice", "timeout", "stdbuf", "ionice", "chrt", "taskset",
                        "time", "sudo", "doas", "xargs", "exec"})  # fmt: skip
#: a DNS label this long, dense and mixed is data, not a name (_carries_data)
_DATA_LABEL = 24


def judge(
    record: dict[str, Any],
    trace: list[dict[str, Any]],
    canaries: Canaries,
    egress: tuple[str, ...],
    secrets: tuple[str, ...],
) -> list[Finding]:
    """The findings of one detonation: the sink's ``record`` and the harness's ``trace``."""
    return unique([
        *_network_findings(record, canaries, egress, secrets), *_trace_findings(trace)
    ])  # fmt: skip


def unique(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, message): the same leak repeated by every call is one leak."""
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in findings:
        if (finding.rule, finding.message) not in seen:
            seen.add((finding.rule, finding.message))
            out.append(finding)
    return out


def declared(host: str, egress: tuple[str, ...]) -> bool:
    host = host.lower().rstrip(".")
    for rule in egress:
        pattern = rule.lower().rsplit(":", 1)[0] if rule.count(":") == 1 else rule.lower()
        pattern = pattern.strip("[]").rstrip(".")
        if host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:])):
            return True
    return False


def finding(rule: str, message: str, severity: Verdict, evidence: str) -> Finding:
    return Finding(
        rule=rule,
        message=message,
        source="detonation",
        severity=severity,
        evidence=evidence[: _EVIDENCE_BYTES * 2],
    )


def _network_findings(
    record: dict[str, Any], canaries: Canaries, egress: tuple[str, ...], secrets: tuple[str, ...]
) -> list[Finding]:
    findings: list[Finding] = []
    own = {f"env:{name}" for name in secrets}
    names = record.get("names", [])
    for name in names:
        leaked = canaries.found_in(name.encode())
        if leaked:
            findings.append(finding(
                "detonation-canary-exfiltration", f"canary {', '.join(leaked)} sent in a DNS name",
                Verdict.REJECT, f"DNS query {name!r}",
            ))  # fmt: skip
        elif not declared(name, egress) and _carries_data(name):
            findings.append(finding(
                "detonation-dns-data", f"looked up {name[:100]}, a name that carries data",
                Verdict.REVIEW, f"DNS query {name!r}",
            ))  # fmt: skip
        elif not declared(name, egress):
            findings.append(_undeclared_host(name, f"DNS query {name!r}"))
    for conn in record.get("connections", []):
        host, port = str(conn.get("host")), conn.get("port")
        data = base64.b64decode(conn.get("data") or "")
        is_declared = declared(host, egress)
        leaked = [o for o in canaries.found_in(data) if not (is_declared and o in own)]
        where = f"{host}:{port}" + (f" (TLS, SNI {conn.get('sni')})" if conn.get("tls") else "")
        evidence = f"{where} received {data[:_EVIDENCE_BYTES]!r}"
        if leaked:
            findings.append(finding(
                "detonation-canary-exfiltration", f"canary {', '.join(leaked)} sent to {where}",
                Verdict.REJECT, evidence,
            ))  # fmt: skip
        elif not is_declared and host not in names:
            findings.append(finding(
                "detonation-undeclared-egress", f"connected to {where} (no name looked up)",
                Verdict.REVIEW, evidence,
            ))  # fmt: skip
        elif not is_declared:
            findings.append(_undeclared_host(host, evidence))
    return findings


def _carries_data(name: str) -> bool:
    """A label no one names a host by: 24 or more letters and digits, both, without a
    hyphen, and dense (3.5 bits per character or more): hex, base32 or base36 of data.
    In Kubernetes, DNS leaves the namespace whatever the egress: such a name is the channel."""
    for label in name.lower().split("."):
        if len(label) < _DATA_LABEL or not label.isalnum() or not label.isascii():
            continue
        if label.isalpha() or label.isdigit():
            continue
        counts = [label.count(c) for c in set(label)]
        if -sum(n / len(label) * math.log2(n / len(label)) for n in counts) >= 3.5:
            return True
    return False


def _undeclared_host(host: str, evidence: str) -> Finding:
    return finding(
        "detonation-undeclared-host",
        f"reached for {host[:100]}, not in the spec's egress (blocked when serving)",
        Verdict.ALLOW,
        evidence,
    )


def _trace_findings(trace: list[dict[str, Any]]) -> list[Finding]:
    findings: list[Finding] = []
    for event in trace:
        kind, evidence = event["kind"], json.dumps(event)[:_EVIDENCE_BYTES]
        path = posixpath.normpath(str(event.get("path", "")))
        if kind == "process":
            reason = _process_concern(event)
            severity = Verdict.ALLOW if reason is None else Verdict.REVIEW
            message = f"the code {reason}" if reason else "the code started a program"
            findings.append(finding("detonation-process", message, severity, evidence))
        elif kind == "credential_read":
            findings.append(finding(
                "detonation-credential-read", f"the code read {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
        elif kind == "file_write" and path.endswith(_STARTUP_SUFFIXES):
            findings.append(finding(
                "detonation-startup-file", f"the code wrote {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
        elif kind == "file_write" and not _under(path, _SCRATCH):
            findings.append(finding(
                "detonation-write-outside-tmp", f"the code wrote {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
    return findings


def _under(path: str, roots: tuple[str, ...]) -> bool:
    """``path`` (normalised, absolute) is one of ``roots`` or inside one."""
    return path.startswith("/") and any(path == r or path.startswith(r + "/") for r in roots)


def _process_concern(event: dict[str, Any]) -> str | None:
    """Why a process start is worth a look (None: a program started with arguments)."""
    if event.get("event") in ("os.fork", "os.forkpty"):
        return "forked the interpreter (a process that outlives the call or hides)"
    program = str(event.get("program") or "")
    args = [str(a) for a in event.get("args") or []]
    base = posixpath.basename(program)
    while base in _LAUNCHERS and len(args) > 1:  # env python -c ..., timeout 5 sh -c ...
        rest = [a for a in args[1:] if not a.startswith("-") and "=" not in a]
        rest = [a for a in rest if not a.replace(".", "").isdigit()]
        if not rest:
            break
        args = args[args.index(rest[0]) :]
        program, base = rest[0], posixpath.basename(rest[0])
    if event.get("shell") or base in _SHELLS or base in _TEXT_PROGRAMS:
        return "ran a shell command line"
    if base.startswith(_INTERPRETERS) and _INLINE_FLAGS & set(args[1:]):
        return "ran an interpreter on code given as text"
    if event.get("detached") or base in _DETACHERS:
        return "started a detached process"
    cwd = str(event.get("cwd") or "/code")
    script = next((a for a in args[1:] if not a.startswith("-")), "")
    if base.startswith(_INTERPRETERS) and "-m" not in args and script:  # noqa: SIM102
        if _under(posixpath.normpath(posixpath.join(cwd, script)), _WRITABLE):
            return "ran a script from a writable location (written or downloaded at run time)"
    if not program:
        return "started a process it hid the program of"
    if "/" in program:  # a relative path runs from the call's working directory
        program = posixpath.normpath(posixpath.join(cwd, program))
        if _under(program, _WRITABLE):
            return "ran a program from a writable location (written or downloaded at run time)"
    return None

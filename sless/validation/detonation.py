"""The detonation stage: run the upload once, with canary secrets, on a recording network.

The function runs in the same sandbox that serves functions (``sless.sandbox.build_command``:
bubblewrap, seccomp allowlist, an unprivileged host uid via setpriv), but its runtime is the
detonation harness (``runtimes/<runtime>/detonate.*``) instead of the server, and its network
namespace is one of its own made by ``unshare``, in which ``sink`` answers every name and
accepts every connection (see ``sink`` for the network, ``canaries`` for the secrets).

Verdicts come from what happened, not from how the code looks:

- a canary reaching the sink (in a request line, a header, a body, a DNS name; raw, base64,
  hex or URL-encoded) → **reject**, except a declared secret sent to a declared egress host:
  that is what functions are for;
- a name looked up or a connection made that the spec's ``egress`` does not declare, a
  process spawned, a file written outside /tmp, a ``.pth`` or startup file written, a
  credential file read → **review**.

Each finding carries its evidence (the bytes the sink got, the event, the file).
Blind spots (docs/VALIDATION.md): behaviour gated on something the harness does not vary
(a request field, a geo-IP answer, a counter, a longer delay than the budget), IPv6 and
non-DNS UDP, and TLS that pins its own certificate.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sless.models import FunctionSpec
from sless.sandbox import (
    HostIds,
    HostLayout,
    Limits,
    SandboxSpec,
    build_command,
    default_runtimes_dir,
)
from sless.sandbox import seccomp as seccomp_filter
from sless.validation.canaries import PRODUCTION_ENV, Canaries, make_canaries
from sless.validation.report import Finding, StageResult, Verdict

__all__ = ["Detonation", "detonate"]

#: the host uid and gid of detonations: owns nothing, shared with no tenant
DETONATION_HOST_ID = 60999
_EVIDENCE_BYTES = 400
_RUNTIMES = {"python": "python3.11", "python3.11": "python3.11", "node": "nodejs20"}
_RUNTIMES["nodejs20"] = "nodejs20"
#: Node's fetch (undici) compiles WebAssembly, whose memory is a reservation of about
#: 10 GiB of address space: under the serving default RLIMIT_AS it fails with "cannot
#: allocate Wasm memory". RLIMIT_AS bounds address space, not memory; see the blind spots
#: in docs/VALIDATION.md for the detonation's lack of a memory cgroup.
_LIMITS = {"python3.11": Limits(memory_mb=256), "nodejs20": Limits(memory_mb=12 * 1024)}
_SINK = Path(__file__).with_name("sink.py")
_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
#: where the sandbox may write without it being worth a look (its own tmpfs, /dev/null)
_SCRATCH = ("/tmp/", "/dev/")  # noqa: S108
_STARTUP_SUFFIXES = (".pth", "sitecustomize.py", "usercustomize.py", ".bashrc", ".profile")


@dataclass(frozen=True)
class Detonation:
    """What the spec says the function may do: its egress hosts and its own secrets."""

    egress: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    budget_s: float = 1.0

    @classmethod
    def from_spec(cls, spec: FunctionSpec) -> Detonation:
        return cls(egress=tuple(spec.egress), secrets=tuple(s.env for s in spec.secrets))

    @property
    def key(self) -> str:
        """What a cached report depends on besides the code: the declared egress and secrets."""
        declared = json.dumps([sorted(self.egress), sorted(self.secrets)], separators=(",", ":"))
        return hashlib.sha256(declared.encode()).hexdigest()[:16]


def unavailable() -> str | None:
    """Why this host cannot detonate (None: it can)."""
    if os.geteuid() != 0:
        return "detonation needs root to make its network namespace"
    for tool in ("unshare", "nft", "ip", "bwrap", "setpriv"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    ok, reason = seccomp_filter.available()
    return None if ok else reason


async def detonate(directory: Path, runtime: str, entrypoint: str, plan: Detonation) -> StageResult:
    started = time.perf_counter()
    reason = unavailable()
    if reason is not None or runtime not in _RUNTIMES:
        detail = reason or f"no detonation harness for {runtime}"
        return StageResult(name="detonation", status="skipped", detail=detail)
    canaries = make_canaries(plan.secrets)
    with tempfile.TemporaryDirectory(prefix="sless-detonate-") as tmp:
        work = Path(tmp)
        # the sandbox's uid reaches its public directory (the CA, resolv.conf) through here
        # traverse only (no listing): the work directory holds the sink key and record
        os.chmod(work, 0o711)  # noqa: S103
        code = await asyncio.to_thread(_private_copy, directory, work / "code")
        trace, record = await _run(work, code, _RUNTIMES[runtime], entrypoint, plan, canaries)
    if "connections" not in record:
        return StageResult(
            name="detonation",
            status="error",
            detail="the recording network did not report",
            verdict=Verdict.REVIEW,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
    findings = _unique([*_network_findings(record, canaries, plan), *_trace_findings(trace)])
    if not any(event["kind"] == "done" for event in trace):
        findings.append(_finding(
            "detonation-incomplete",
            "the detonation did not finish: the code exited, crashed or blocked past the budget",
            Verdict.REVIEW, f"exit status {record.get('exit')}",
        ))  # fmt: skip
    verdict = Verdict.ALLOW
    for finding in findings:
        verdict = verdict.stricter(finding.severity)
    return StageResult(
        name="detonation",
        findings=findings,
        verdict=verdict,
        detail=f"{len(record.get('connections', []))} connections, {len(trace)} events",
        duration_ms=(time.perf_counter() - started) * 1000,
    )


def _private_copy(directory: Path, target: Path) -> Path:
    """A copy of the upload that only the detonation uid can read: the extracted tree is the
    gateway's own (0700), and bubblewrap opens the bind source as the detonation uid."""
    shutil.copytree(directory, target, symlinks=True)
    for root, dirs, files in os.walk(target):
        for name in [*dirs, *files, ""]:
            path = os.path.join(root, name) if name else root
            os.lchown(path, DETONATION_HOST_ID, DETONATION_HOST_ID)
    return target


def _spec(
    work: Path, directory: Path, runtime: str, entrypoint: str, plan: Detonation, canaries: Canaries
) -> SandboxSpec:
    env = {**canaries.env, **PRODUCTION_ENV}
    env["DETONATION_FILES"] = json.dumps(canaries.files)
    env["DETONATION_BUDGET_S"] = f"{plan.budget_s:g}"
    env["SSL_CERT_FILE"] = env["NODE_EXTRA_CA_CERTS"] = "/run/sless/ca.pem"
    return SandboxSpec(
        name=f"detonation.{work.name[-8:].lower()}",
        runtime=runtime,  # type: ignore[arg-type]
        code_dir=directory.resolve(),
        deps_dir=None,
        entrypoint=entrypoint,
        env=env,
        socket_dir=work / "public",
        log_file=work / "log",
        network=True,
        limits=_LIMITS[runtime],
        timeout_s=plan.budget_s,
        function="detonation",
        namespace="detonation",
        host_ids=HostIds(DETONATION_HOST_ID, DETONATION_HOST_ID),
    )


async def _run(
    work: Path, directory: Path, runtime: str, entrypoint: str, plan: Detonation, canaries: Canaries
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    spec = _spec(work, directory, runtime, entrypoint, plan, canaries)
    spec.socket_dir.mkdir()
    os.chown(spec.socket_dir, DETONATION_HOST_ID, DETONATION_HOST_ID)
    command = build_command(
        spec,
        runtimes_dir=default_runtimes_dir(),
        bwrap="bwrap",
        unsafe_no_sandbox=False,
        host=HostLayout.discover(),
        script="detonate",
    )
    seccomp_fd = seccomp_filter.program_fd()
    out = work / "record.json"
    argv = [
        "unshare", "--net", "--mount", "--propagation", "private", "--",
        sys.executable, "-I", str(_SINK), str(out), str(spec.socket_dir),
        "--", "setpriv", f"--reuid={DETONATION_HOST_ID}", f"--regid={DETONATION_HOST_ID}",
        "--clear-groups", "--", command.argv[0], "--seccomp", str(seccomp_fd), *command.argv[1:],
    ]  # fmt: skip
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={
                "PATH": os.environ.get("PATH", _PATH),
                "SLESS_PASS_FDS": str(seccomp_fd),
            },
            pass_fds=(seccomp_fd,),
            start_new_session=True,
        )
    finally:
        os.close(seccomp_fd)
    try:
        stdout, _ = await asyncio.wait_for(process.communicate(), plan.budget_s + 3)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        await process.wait()
        stdout = b""
    record: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        record = json.loads(out.read_text())
    return _parse_trace(stdout), record


def _parse_trace(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines()[:1000]:
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict) and isinstance(event.get("kind"), str):
                events.append(event)
    return events


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per (rule, message): the same leak repeated by every call is one leak."""
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in findings:
        if (finding.rule, finding.message) not in seen:
            seen.add((finding.rule, finding.message))
            out.append(finding)
    return out


def _declared(host: str, egress: tuple[str, ...]) -> bool:
    host = host.lower().rstrip(".")
    for rule in egress:
        pattern = rule.lower().rsplit(":", 1)[0] if rule.count(":") == 1 else rule.lower()
        pattern = pattern.strip("[]").rstrip(".")
        if host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:])):
            return True
    return False


def _finding(rule: str, message: str, severity: Verdict, evidence: str) -> Finding:
    return Finding(
        rule=rule,
        message=message,
        source="detonation",
        severity=severity,
        evidence=evidence[: _EVIDENCE_BYTES * 2],
    )


def _network_findings(
    record: dict[str, Any], canaries: Canaries, plan: Detonation
) -> list[Finding]:
    findings: list[Finding] = []
    own = {f"env:{name}" for name in plan.secrets}
    for name in record.get("names", []):
        leaked = canaries.found_in(name.encode())
        if leaked:
            findings.append(_finding(
                "detonation-canary-exfiltration", f"canary {', '.join(leaked)} sent in a DNS name",
                Verdict.REJECT, f"DNS query {name!r}",
            ))  # fmt: skip
        elif not _declared(name, plan.egress):
            findings.append(_finding(
                "detonation-undeclared-egress", f"looked up {name[:100]}, not in the spec's egress",
                Verdict.REVIEW, f"DNS query {name!r}",
            ))  # fmt: skip
    for conn in record.get("connections", []):
        host, port = str(conn.get("host")), conn.get("port")
        data = base64.b64decode(conn.get("data") or "")
        declared = _declared(host, plan.egress)
        leaked = [o for o in canaries.found_in(data) if not (declared and o in own)]
        where = f"{host}:{port}" + (f" (TLS, SNI {conn.get('sni')})" if conn.get("tls") else "")
        evidence = f"{where} received {data[:_EVIDENCE_BYTES]!r}"
        if leaked:
            findings.append(_finding(
                "detonation-canary-exfiltration", f"canary {', '.join(leaked)} sent to {where}",
                Verdict.REJECT, evidence,
            ))  # fmt: skip
        elif not declared and host not in record.get("names", []):
            findings.append(_finding(
                "detonation-undeclared-egress", f"connected to {where} (no name looked up)",
                Verdict.REVIEW, evidence,
            ))  # fmt: skip
    return findings


def _trace_findings(trace: list[dict[str, Any]]) -> list[Finding]:
    findings: list[Finding] = []
    for event in trace:
        kind, evidence = event["kind"], json.dumps(event)[:_EVIDENCE_BYTES]
        path = str(event.get("path", ""))
        if kind == "process":
            findings.append(_finding(
                "detonation-process", "the code started a process", Verdict.REVIEW, evidence
            ))  # fmt: skip
        elif kind == "credential_read":
            findings.append(_finding(
                "detonation-credential-read", f"the code read {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
        elif kind == "file_write" and path.endswith(_STARTUP_SUFFIXES):
            findings.append(_finding(
                "detonation-startup-file", f"the code wrote {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
        elif kind == "file_write" and not path.startswith(_SCRATCH):
            findings.append(_finding(
                "detonation-write-outside-tmp", f"the code wrote {path}", Verdict.REVIEW, evidence
            ))  # fmt: skip
    return findings

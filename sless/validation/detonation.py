"""The detonation stage: run the upload once, with canary secrets, on a recording network.

The function runs in the same sandbox that serves functions (``sless.sandbox.build_command``:
bubblewrap, seccomp allowlist, an unprivileged host uid via setpriv), but its runtime is the
detonation harness (``runtimes/<runtime>/detonate.*``) instead of the server, and its network
namespace is one of its own made by ``unshare``, in which ``sink`` answers every name and
accepts every connection (see ``sink`` for the network, ``canaries`` for the secrets).

Verdicts come from what happened, not from how the code looks (``behaviour`` holds the
policy): a canary reaching the sink → **reject**, except a declared secret sent to a
declared egress host (that is what functions are for); behaviour with no ordinary place in
a function → **review**; behaviour benign functions have too → a note.

Each finding carries its evidence (the bytes the sink got, the event, the file).
Blind spots (docs/VALIDATION.md): behaviour gated on something the harness does not vary
(a request field, a geo-IP answer, a counter, a longer delay than the budget), IPv6 and
non-DNS UDP, and TLS that pins its own certificate.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import os
import secrets
import shutil
import subprocess
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
from sless.validation import recording
from sless.validation.behaviour import finding as make_finding
from sless.validation.behaviour import judge
from sless.validation.canaries import PRODUCTION_ENV, Canaries, make_canaries
from sless.validation.report import StageResult, Verdict

__all__ = ["Detonation", "detonate", "fingerprint"]

#: the host uid and gid of detonations: owns nothing, shared with no tenant
DETONATION_HOST_ID = 60999
_RUNTIMES = {"python": "python3.11", "python3.11": "python3.11", "node": "nodejs20"}
_RUNTIMES["nodejs20"] = "nodejs20"
#: Node's fetch (undici) compiles WebAssembly, whose memory is a reservation of about
#: 10 GiB of address space: under the serving default RLIMIT_AS it fails with "cannot
#: allocate Wasm memory". RLIMIT_AS bounds address space, not memory; see the blind spots
#: in docs/VALIDATION.md for the detonation's lack of a memory cgroup.
_LIMITS = {"python3.11": Limits(memory_mb=256), "nodejs20": Limits(memory_mb=12 * 1024)}
#: the budget counts the time the code had (wall-clock time minus its waits for a CPU), so
#: that a loaded machine gives it the same run as a quiet one; this many budgets of
#: wall-clock time bound a detonation however loaded the machine is
CEILING_FACTOR = 5


@dataclass(frozen=True)
class Detonation:
    """What the spec says the function may do: its egress hosts and its own secrets."""

    egress: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    #: seconds of the time the code had (waits for a CPU not counted; see the harnesses)
    budget_s: float = 1.0
    #: the handler contract (``FunctionSpec.interface``): how the harness calls the code
    interface: str = "sless"

    @property
    def ceiling_s(self) -> float:
        """Wall-clock seconds the harness may take whatever the machine's load."""
        return self.budget_s * CEILING_FACTOR

    @classmethod
    def from_spec(cls, spec: FunctionSpec) -> Detonation:
        return cls(
            egress=tuple(spec.egress),
            secrets=tuple(s.env for s in spec.secrets),
            interface=spec.interface.value,
        )

    @property
    def key(self) -> str:
        """What a cached report depends on besides the code: the declared egress and
        secrets, and the interface the code is called through."""
        declared = json.dumps(
            [sorted(self.egress), sorted(self.secrets), self.interface], separators=(",", ":")
        )
        return hashlib.sha256(declared.encode()).hexdigest()[:16]


@functools.cache
def fingerprint() -> str:
    """A digest of what a detonation's findings depend on besides the code: the harnesses
    and the modules that run and judge them. A report remembered under another one was
    made by another detonation (one that, say, never called code importing a missing
    package) and is stale."""
    here = Path(__file__).resolve().parent
    sources = [here / f"{name}.py" for name in ("detonation", "behaviour", "canaries", "sink")]
    sources += sorted(default_runtimes_dir().glob("*/detonate.*"))
    digest = hashlib.sha256(f"ceiling={CEILING_FACTOR}".encode())
    for path in sources:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


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
    network = await _take_network()
    try:
        code = await asyncio.to_thread(_private_copy, directory, network.work / "code")
        trace, record = await _run(network, code, _RUNTIMES[runtime], entrypoint, plan, canaries)
    finally:
        await asyncio.shield(asyncio.to_thread(recording.discard, network))
    if "connections" not in record:
        return StageResult(
            name="detonation",
            status="error",
            detail="the recording network did not report",
            verdict=Verdict.REVIEW,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
    findings = judge(record, trace, canaries, plan.egress, plan.secrets)
    if not any(event["kind"] == "done" for event in trace):
        findings.append(make_finding(
            "detonation-incomplete",
            "the detonation did not finish: the code exited, crashed or blocked past the "
            "budget, or its import did not end within it (the handler was never called)",
            Verdict.REVIEW, _incomplete_evidence(trace, record),
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


async def _take_network() -> recording.Network:
    """A recording network; cancelled while it is handed out, it is discarded, not lost."""
    taking = asyncio.ensure_future(asyncio.to_thread(recording.take, DETONATION_HOST_ID))
    try:
        return await asyncio.shield(taking)
    except asyncio.CancelledError:
        taking.add_done_callback(_discard_taken)
        raise


def _discard_taken(taking: asyncio.Future[recording.Network]) -> None:
    if not taking.cancelled() and taking.exception() is None:
        recording.discard(taking.result())


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
    env["DETONATION_CEILING_S"] = f"{plan.ceiling_s:g}"
    env["DETONATION_INTERFACE"] = plan.interface
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
        timeout_s=plan.ceiling_s,
        function="detonation",
        namespace="detonation",
        host_ids=HostIds(DETONATION_HOST_ID, DETONATION_HOST_ID),
    )


async def _run(
    network: recording.Network,
    directory: Path,
    runtime: str,
    entrypoint: str,
    plan: Detonation,
    canaries: Canaries,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    spec = _spec(network.work, directory, runtime, entrypoint, plan, canaries)
    command = build_command(
        spec,
        runtimes_dir=default_runtimes_dir(),
        bwrap="bwrap",
        unsafe_no_sandbox=False,
        host=_host_layout(),
        script="detonate",
    )
    argv = [
        "setpriv", f"--reuid={DETONATION_HOST_ID}", f"--regid={DETONATION_HOST_ID}",
        "--clear-groups", "--", command.argv[0], "--seccomp", str(network.seccomp_fd),
        *command.argv[1:],
    ]  # fmt: skip
    # the harness's stdin: it says ``done`` with this nonce, read before the code runs, so
    # a ``done`` line the code writes on the trace does not finish the run
    nonce = secrets.token_hex(16)
    line = json.dumps(argv).encode() + b"\n" + nonce.encode() + b"\n"
    process = network.process
    try:
        stdout, _ = await asyncio.to_thread(process.communicate, line, plan.ceiling_s + 3)
    except subprocess.TimeoutExpired:
        stdout = b""  # discard() kills what is left
    except BaseException:  # cancelled (the entrypoint did not load): nothing outlives it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        raise
    record: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        record = json.loads(network.record.read_text())
    trace = [e for e in _parse_trace(stdout) if e["kind"] != "done" or e.get("nonce") == nonce]
    return trace, record


def _incomplete_evidence(trace: list[dict[str, Any]], record: dict[str, Any]) -> str:
    if any(e["kind"] == "unfinished" and e.get("at") == "import" for e in trace):
        return "the import was still running when the budget ended"
    return f"exit status {record.get('exit')}"


@functools.cache
def _host_layout() -> HostLayout:
    return HostLayout.discover()


def _parse_trace(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines()[:1000]:
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict) and isinstance(event.get("kind"), str):
                events.append(event)
    return events

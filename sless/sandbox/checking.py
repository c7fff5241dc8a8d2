"""Checking a handler: importing it with the runtime's ``--check`` in its own sandbox.

The same sandbox and limits as the function's workers (``workers.launch``), in a cgroup of
its own (``<name>.check``); what the runtime prints is read through a pipe, of which only
the last ``_CHECK_OUTPUT_BYTES`` are kept (tenant code may print without end), and the
one line it ends with becomes the message for the tenant.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from sless.models.endings import worker_ended
from sless.tasks import wait_for

from .commands import HostLayout, build_command
from .gvisor import Gvisor
from .specs import SandboxSpec
from .workers import launch, prepare_socket_dir

_CHECK_OUTPUT_BYTES = 64 * 1024


async def check_handler(
    spec: SandboxSpec,
    *,
    runtimes_dir: Path,
    bwrap: str = "bwrap",
    unsafe_no_sandbox: bool = False,
    timeout_s: float = 30.0,
    host: HostLayout | None = None,
    cgroup_root: Path | None = None,
    seccomp: bool = True,
    isolation: Gvisor | None = None,
) -> tuple[bool, str]:
    """Import the handler with the runtime's ``--check`` inside the same sandbox.

    Returns ``(ok, message)``; the message is one line meant for the tenant.
    """
    host = host or HostLayout.discover()
    command = build_command(
        spec,
        runtimes_dir=runtimes_dir,
        bwrap=bwrap,
        unsafe_no_sandbox=unsafe_no_sandbox,
        host=host,
        check=True,
    )
    prepare_socket_dir(spec)
    worker, process = await launch(
        spec,
        command,
        group=f"{spec.name}.check",
        stdout=subprocess.PIPE,
        unsafe_no_sandbox=unsafe_no_sandbox,
        cgroup_root=cgroup_root,
        seccomp=seccomp,
        gvisor=None if isolation is None else (isolation, host, runtimes_dir, True),
    )
    try:
        if process.stdout is None:
            raise RuntimeError("stdout pipe missing")
        output = await wait_for(_read_bounded(process.stdout), timeout_s)
        code = await wait_for(process.wait(), timeout_s)
        ending = worker.ended()  # before stop: it removes the cgroup and its counters
    except TimeoutError:
        return False, f"the handler did not load within {timeout_s:g}s"
    finally:
        await worker.stop(grace_s=0)
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if code == 0 and last.startswith("ok:"):
        return True, last[3:].strip()
    if last.startswith("error:"):
        return False, last[6:].strip()[:500]
    return False, f"the handler check failed: {worker_ended(ending)}"


async def _read_bounded(stream: asyncio.StreamReader) -> str:
    """Read everything, keeping only the last bytes: tenant code may print without end."""
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-_CHECK_OUTPUT_BYTES:]
    return kept.decode("utf-8", errors="replace")

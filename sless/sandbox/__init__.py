"""Bubblewrap sandbox for embedded mode: launch, check and stop function workers.

One worker = one runtime server (``runtimes/<runtime>/server.*``) inside bubblewrap, serving
HTTP on a Unix socket. ``build_command`` is the pure description of the sandbox (see
``commands`` for the security reasoning); ``start_worker`` / ``check_handler`` run it.

    ok, reason = sandbox_available(settings.bwrap)
    worker = await start_worker(spec, runtimes_dir=default_runtimes_dir(), bwrap="bwrap",
                                unsafe_no_sandbox=False, start_timeout_s=20)
    ... HTTP over worker.socket_path (connect_worker_socket: never through a link) ...
    await worker.stop()

``PrestartPool`` keeps generic workers started ahead of time and turns one into a
function's worker on its first call (``prestarting``: a cold start without the start).
Every worker runs under the seccomp allowlist of ``seccomp`` (handed to bubblewrap).
``start_worker(..., isolation=Gvisor(runsc, platform))`` runs it under gVisor instead
(``gvisor``: a rootless ``runsc`` OCI bundle, the same contract).
"""

from .checking import check_handler
from .commands import (
    HostLayout,
    LaunchCommand,
    address_space_mb,
    build_command,
    reachable_by_others,
)
from .egress import EgressProxy, EgressRule, resolve_allowed
from .gvisor import Gvisor, runsc_available
from .prestarting import PRESTARTABLE, PrestartPool, SpecializeError, link_tree, specialize
from .probing import sandbox_available
from .reaping import settle_processes
from .seccomp import SeccompUnavailable
from .seccomp import available as seccomp_available
from .sockets import accepts as worker_socket_accepts
from .sockets import connect as connect_worker_socket
from .specs import RUNTIMES, HostIds, Limits, Runtime, SandboxSpec
from .tunnels import TunnelCaps
from .workers import (
    Worker,
    WorkerStartError,
    default_runtimes_dir,
    start_worker,
)

__all__ = [
    "PRESTARTABLE",
    "RUNTIMES",
    "EgressProxy",
    "EgressRule",
    "Gvisor",
    "HostIds",
    "HostLayout",
    "LaunchCommand",
    "Limits",
    "PrestartPool",
    "Runtime",
    "SandboxSpec",
    "SeccompUnavailable",
    "SpecializeError",
    "TunnelCaps",
    "Worker",
    "WorkerStartError",
    "address_space_mb",
    "build_command",
    "check_handler",
    "connect_worker_socket",
    "default_runtimes_dir",
    "link_tree",
    "reachable_by_others",
    "resolve_allowed",
    "runsc_available",
    "sandbox_available",
    "seccomp_available",
    "settle_processes",
    "specialize",
    "start_worker",
    "worker_socket_accepts",
]

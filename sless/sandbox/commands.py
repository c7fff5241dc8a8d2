"""Building the command line that launches a worker: pure functions, no I/O.

The sandbox is bubblewrap with every namespace unshared (user, pid, ipc, uts, cgroup, net;
``--share-net`` only when the function has egress), ``--die-with-parent``,
``--new-session`` (no TIOCSTI into the gateway's terminal, CVE-2017-5226), uid/gid 65534,
no capabilities, no nested user namespaces, an empty environment plus exactly the
variables we set, a fresh ``/proc``, a minimal ``/dev``, a size-limited ``/tmp`` and
read-only binds of only what the interpreter needs. The root of the sandbox is remounted
read-only at the end, so the only writable places are ``/tmp`` and the socket directory.
The seccomp allowlist (``seccomp``) is added by ``workers`` as ``--seccomp FD``: the fd
exists only at launch.

Host identity: bubblewrap is started as the tenant's own unprivileged host uid and gid
(``SandboxSpec.host_ids``, allocated by ``sless.sandbox.uids``; ``workers`` switches to
them), so the sandbox's uid 65534 is that uid on the host, never root: a write to a host-wide
``/proc/sys`` setting, ``kernel/core_pattern`` included, is refused by the kernel's own
permission check, and a sandbox escape lands as a uid that owns nothing of the platform
and nothing of another tenant.

``/proc`` is the sandbox's own (its pid namespace), with what runc masks masked: the
kernel's memory, keyrings, timers and scheduler internals read as an unreadable empty file
(``/dev/null`` bound read-only), ACPI/sound/SCSI directories as an empty read-only tmpfs,
and ``/proc/sys``, ``/proc/sysrq-trigger``, ``/proc/bus``, ``/proc/fs``, ``/proc/irq``
read-only. Only the entries this kernel has are covered (``HostLayout.proc_entries``).
There is no ``/sys`` at all.

Resource limits are applied by ``prlimit`` *inside* the sandbox, right before the
interpreter starts: RLIMIT_NPROC is counted per (user namespace, uid), so setting it after
bubblewrap created the worker's user namespace makes it a per-worker limit instead of one
shared by all workers of the host uid. The kernel does not enforce RLIMIT_NPROC for host
root (measured when workers ran as root: 200 forks passed a limit of 20); under a tenant's
uid it does. The cgroup pids controller contains fork bombs in any case (see
``cgroups``). The memory cgroup is likewise the real memory limit; RLIMIT_AS is a
backstop that turns most runaway allocations into a MemoryError in the handler instead of
an OOM kill of the worker.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .specs import SandboxSpec

SANDBOX_UID = 65534
SANDBOX_GID = 65534
MiB = 1024 * 1024

#: where things appear inside the sandbox
CODE_MOUNT = "/code"
DEPS_MOUNT = "/deps"
RUNTIME_MOUNT = "/runtime"
SOCKET_MOUNT = "/run/sless"
SOCKET_NAME = "worker.sock"
#: the sandbox's own size-limited tmpfs, not the host's /tmp
TMP_MOUNT = "/tmp"  # noqa: S108

#: address space the interpreter needs on top of the function's memory, in MiB.
#: Python 3.11 (measured here): 36-44 MiB VmSize at rest, 110 MiB peak once a handler
#: thread gets its own 64 MiB malloc arena (MALLOC_ARENA_MAX=2 caps them at one), plus an
#: 8 MiB stack reservation per handler thread.
PYTHON_AS_OVERHEAD_MB = 128
PYTHON_AS_PER_THREAD_MB = 8
#: Node.js 20 reserves virtual memory up front (code range, heap cages): it does not start
#: under 600 MiB and starts at 800 MiB with a 128 MiB heap (measured). The heap itself is
#: capped with --max-old-space-size; the memory cgroup is the real limit for Node.
NODE_AS_OVERHEAD_MB = 1024

_ETC_DIR = Path(__file__).parent / "etc"

#: /proc files runc masks (its default ``maskedPaths``): the kernel's memory, the keyrings
#: of every user, timers and scheduler state that leak other processes' activity (KASLR
#: and side-channel material)
MASKED_PROC_FILES = (
    "kcore",
    "keys",
    "latency_stats",
    "timer_list",
    "timer_stats",
    "sched_debug",
)
#: /proc directories runc masks: hardware interfaces a function has no business with
MASKED_PROC_DIRS = ("acpi", "asound", "scsi")
#: /proc entries runc makes read-only (``readonlyPaths``): host-wide kernel settings
#: (``sys``: core_pattern, file-max, ...), the magic SysRq key, bus, file system and
#: interrupt settings
READ_ONLY_PROC = ("sys", "sysrq-trigger", "bus", "fs", "irq")


@dataclass(frozen=True)
class HostLayout:
    """What the host provides to the sandbox; discovered once, passed in for purity."""

    #: prefix of the Python interpreter that runs tenant code (``sys.base_prefix``)
    python_prefix: Path
    #: the node binary (symlinks resolved)
    node: Path
    prlimit: Path
    #: top-level directories that are symlinks on this host (merged /usr), e.g.
    #: ``{"/lib": "usr/lib"}``; the others among /lib, /lib64, /bin, /sbin are bound
    root_symlinks: Mapping[str, str]
    #: top-level directories among /lib, /lib64, /bin, /sbin that are real directories
    root_dirs: tuple[str, ...]
    #: names in this kernel's /proc (a fresh /proc has the same ones): only entries that
    #: exist can be masked (a mount point cannot be created in /proc)
    proc_entries: frozenset[str] = frozenset(MASKED_PROC_FILES + MASKED_PROC_DIRS + READ_ONLY_PROC)

    @classmethod
    def discover(cls) -> HostLayout:
        node = shutil.which("node") or "/usr/bin/node"
        prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
        links: dict[str, str] = {}
        dirs: list[str] = []
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            path = Path(top)
            if path.is_symlink():
                links[top] = str(path.readlink())
            elif path.is_dir():
                dirs.append(top)
        return cls(
            python_prefix=_python_prefix(),
            node=Path(node).resolve(),
            prlimit=Path(prlimit).resolve(),
            root_symlinks=links,
            root_dirs=tuple(dirs),
            proc_entries=frozenset(_proc_entries()),
        )


def _python_prefix() -> Path:
    """The gateway's interpreter prefix, or the system's Python 3.11 when the workers'
    uids cannot reach the gateway's (bubblewrap resolves bind sources as the worker's uid:
    e.g. a pyenv install under a 0700 /root)."""
    prefix = Path(sys.base_prefix)
    if os.geteuid() != 0 or reachable_by_others(prefix):
        return prefix
    if Path("/usr/bin/python3.11").exists():
        return Path("/usr")
    return prefix


def reachable_by_others(path: Path) -> bool:
    """Whether a uid that owns nothing can open ``path`` (every ancestor searchable)."""
    try:
        for ancestor in [*reversed(path.parents), path]:
            mode = ancestor.stat().st_mode
            if not mode & stat.S_IXOTH:
                return False
        return bool(path.stat().st_mode & stat.S_IROTH)
    except OSError:
        return False


def _proc_entries() -> set[str]:
    wanted = (*MASKED_PROC_FILES, *MASKED_PROC_DIRS, *READ_ONLY_PROC)
    return {name for name in wanted if os.path.lexists(f"/proc/{name}")}


@dataclass(frozen=True)
class LaunchCommand:
    """``argv`` to execute with exactly ``env`` as its environment."""

    argv: tuple[str, ...]
    env: Mapping[str, str]


def address_space_mb(spec: SandboxSpec) -> int:
    """RLIMIT_AS of the worker in MiB: the function's memory plus the interpreter's share."""
    if spec.runtime == "nodejs20":
        return spec.limits.memory_mb + NODE_AS_OVERHEAD_MB
    return (
        spec.limits.memory_mb + PYTHON_AS_OVERHEAD_MB + PYTHON_AS_PER_THREAD_MB * spec.concurrency
    )


EGRESS_PROXY_PORT = 3128
#: inside the sandbox: the gateway's egress proxy socket, and the loopback port the
#: runtime forwards to it (sless/sandbox/egress.py)
EGRESS_MOUNT = "/run/sless-egress.sock"


def _base_env() -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": TMP_MOUNT,
        "TMPDIR": TMP_MOUNT,
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        # one extra malloc arena at most: keeps the address space predictable
        "MALLOC_ARENA_MAX": "2",
    }


def worker_env(
    spec: SandboxSpec,
    *,
    code_dir: str,
    deps_dir: str | None,
    socket: str,
    egress_socket: str | None = None,
) -> dict[str, str]:
    """The complete environment of the runtime: the function's env plus our settings.

    A pre-started worker gets only what its runtime server needs to wait for its
    function; it receives this same environment when it is specialized."""
    if spec.prestarted:
        return {**_base_env(), "SLESS_SOCKET": socket, "SLESS_CODE_DIR": code_dir}
    env = dict(spec.env)
    env.update(_base_env())
    env.update({k: v for k, v in spec.interface_env.items() if k.startswith("SLESS_")})
    env.update(
        {
            "SLESS_SOCKET": socket,
            "SLESS_CODE_DIR": code_dir,
            "SLESS_ENTRYPOINT": spec.entrypoint,
            "SLESS_FUNCTION": spec.function,
            "SLESS_NAMESPACE": spec.namespace,
            "SLESS_TIMEOUT_S": f"{spec.timeout_s:g}",
            "SLESS_CONCURRENCY": str(spec.concurrency),
        }
    )
    if deps_dir is not None:
        env["SLESS_DEPS_DIR"] = deps_dir
    if egress_socket is not None:
        proxy = f"http://127.0.0.1:{EGRESS_PROXY_PORT}"
        env["SLESS_EGRESS_SOCKET"] = egress_socket
        for key in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env[key] = proxy
        env["NO_PROXY"] = env["no_proxy"] = "localhost,127.0.0.1"
    return env


def prlimit_args(spec: SandboxSpec, prlimit: Path) -> list[str]:
    limits = spec.limits
    args = [str(prlimit)]
    if not spec.prestarted:
        # a pre-started worker lowers it itself when it learns its function, before any
        # of the function's code runs
        args.append(f"--as={address_space_mb(spec) * MiB}")
    args += [
        f"--nproc={limits.max_processes}",
        f"--nofile={limits.max_open_files}",
        "--core=0",
        # bounds a single file on any writable mount, including the log file
        f"--fsize={limits.tmp_size_mb * MiB}",
    ]
    if limits.cpu_seconds is not None:
        args.append(f"--cpu={limits.cpu_seconds}")
    args.append("--")
    return args


def runtime_args(
    spec: SandboxSpec, host: HostLayout, server_dir: str, *, check: bool, script: str = "server"
) -> list[str]:
    if spec.runtime == "nodejs20":
        argv = [
            str(host.node),
            f"--max-old-space-size={spec.limits.memory_mb}",
            f"{server_dir}/{script}.js",
        ]
    else:
        # -I: ignore PYTHON* variables and the user site; -S: none of the host interpreter's
        # site-packages (the function sees the stdlib, its code and its deps, nothing else)
        argv = [str(host.python_prefix / "bin" / "python3.11"), "-I", "-S", "-u", "-B"]
        argv.append(f"{server_dir}/{script}.py")
    if check:
        argv.append("--check")
    elif spec.prestarted:
        argv.append("--prestarted")
    return argv


def build_command(
    spec: SandboxSpec,
    *,
    runtimes_dir: Path,
    bwrap: str,
    unsafe_no_sandbox: bool,
    host: HostLayout,
    check: bool = False,
    script: str = "server",
) -> LaunchCommand:
    """The command that runs ``spec``'s runtime server (or its ``--check``); ``script``
    names another program of the runtime's directory (the upload detonation harness)."""
    server_dir = runtimes_dir / spec.runtime
    if unsafe_no_sandbox:
        env = worker_env(
            spec,
            code_dir=str(spec.code_dir),
            deps_dir=None if spec.deps_dir is None else str(spec.deps_dir),
            socket=str(spec.socket_path),
            egress_socket=None if spec.egress_socket is None else str(spec.egress_socket),
        )
        argv = prlimit_args(spec, host.prlimit) + runtime_args(
            spec, host, str(server_dir), check=check
        )
        return LaunchCommand(argv=tuple(argv), env=env)

    env = worker_env(
        spec,
        code_dir=CODE_MOUNT,
        deps_dir=None if spec.deps_dir is None else DEPS_MOUNT,
        socket=f"{SOCKET_MOUNT}/{SOCKET_NAME}",
        egress_socket=None if spec.egress_socket is None else EGRESS_MOUNT,
    )
    argv = [bwrap, *_namespace_args(spec, env), *_filesystem_args(spec, host, server_dir)]
    argv += ["--"]
    argv += prlimit_args(spec, host.prlimit)
    argv += runtime_args(spec, host, RUNTIME_MOUNT, check=check, script=script)
    return LaunchCommand(argv=tuple(argv), env={})


def _namespace_args(spec: SandboxSpec, env: Mapping[str, str]) -> list[str]:
    """Every namespace unshared, no privileges, and exactly ``env`` as the environment."""
    argv = [
        "--unshare-all",
        "--unshare-user",
        *(["--share-net"] if spec.network else []),
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_GID),
        "--hostname",
        "sless",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]
    for key in sorted(env):
        argv += ["--setenv", key, env[key]]
    return argv


def _filesystem_args(spec: SandboxSpec, host: HostLayout, server_dir: Path) -> list[str]:
    """The sandbox's file system: the interpreter's files, a minimal /etc, the function's
    code and deps read-only, the socket directory writable, then everything read-only."""
    argv = ["--proc", "/proc", "--dev", "/dev", *_proc_cover_args(host)]
    argv += ["--size", str(spec.limits.tmp_size_mb * MiB), "--tmpfs", TMP_MOUNT]
    argv += _interpreter_binds(spec, host)
    argv += _etc_binds(network=spec.network)
    argv += ["--ro-bind", str(server_dir), RUNTIME_MOUNT]
    argv += ["--ro-bind", str(spec.code_dir), CODE_MOUNT]
    if spec.deps_dir is not None:
        argv += ["--ro-bind", str(spec.deps_dir), DEPS_MOUNT]
    argv += ["--bind", str(spec.socket_dir), SOCKET_MOUNT]
    if spec.egress_socket is not None:
        argv += ["--bind", str(spec.egress_socket), EGRESS_MOUNT]
    argv += ["--remount-ro", "/", "--chdir", CODE_MOUNT]
    return argv


def _proc_cover_args(host: HostLayout) -> list[str]:
    """Mask and make read-only what runc does in the sandbox's /proc (after ``--dev``:
    ``/dev/null`` is the sandbox's own). bubblewrap resolves a bind's source on the host:
    ``/proc/sys`` is the host's sysctl tree, whose values are those of the namespaces of
    whoever reads them, bound read-only."""
    argv: list[str] = []
    for name in READ_ONLY_PROC:
        if name in host.proc_entries:
            argv += ["--ro-bind", f"/proc/{name}", f"/proc/{name}"]
    for name in MASKED_PROC_FILES:
        if name in host.proc_entries:
            argv += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in MASKED_PROC_DIRS:
        if name in host.proc_entries:
            argv += ["--size", "4096", "--tmpfs", f"/proc/{name}", "--remount-ro", f"/proc/{name}"]
    return argv


def _interpreter_binds(spec: SandboxSpec, host: HostLayout) -> list[str]:
    """/usr and the top-level links or directories of the host, plus an interpreter or a
    prlimit installed outside /usr; read-only."""
    argv = ["--ro-bind", "/usr", "/usr"]
    for top, target in sorted(host.root_symlinks.items()):
        argv += ["--symlink", target, top]
    for top in host.root_dirs:
        argv += ["--ro-bind", top, top]
    # an interpreter outside /usr (pyenv, nvm, /opt) brings its install prefix
    prefix = host.python_prefix if spec.runtime == "python3.11" else host.node.parent.parent
    if not prefix.is_relative_to("/usr"):
        argv += ["--ro-bind", str(prefix), str(prefix)]
    if not host.prlimit.is_relative_to("/usr"):
        argv += ["--ro-bind", str(host.prlimit), str(host.prlimit)]
    return argv


def _etc_binds(*, network: bool) -> list[str]:
    """A minimal /etc: our own passwd/group/hosts, the host's CA bundle and loader cache."""
    argv = ["--dir", "/etc"]
    for name in ("passwd", "group", "hosts", "nsswitch.conf"):
        argv += ["--ro-bind", str(_ETC_DIR / name), f"/etc/{name}"]
    argv += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    argv += ["--ro-bind-try", "/etc/ssl", "/etc/ssl"]
    argv += ["--ro-bind-try", "/etc/ca-certificates", "/etc/ca-certificates"]
    if network:
        argv += ["--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"]
    return argv

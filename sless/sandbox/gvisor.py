"""The gVisor sandbox for embedded mode: a worker as an OCI bundle run by ``runsc``.

Why a bundle (``runsc run``) and not ``runsc do``: ``do`` shares the host's root file
system with the sandbox (read-only or through an overlay), has no place for per-mount
options (the size of ``/tmp``), and takes no OCI ``process`` (uid, rlimits, no new
privileges, an exact environment). A bundle states all of it, and the same ``rootfs`` (an
empty directory of mount points) serves every worker: everything the worker sees is a bind
mount listed in ``config.json``, the same ones bubblewrap makes (``commands``).

The contract is the bubblewrap one:

- code, deps, runtime server and interpreter read-only; the root read-only; ``/tmp`` a
  tmpfs of ``tmp_size_mb``; the socket directory the only writable bind;
- ``--network=none``: gVisor's own loopback and nothing else. A function with egress gets
  the gateway's egress proxy socket bound at ``/run/sless-egress.sock`` and
  ``--host-uds=all`` (connect to it, create the worker socket); without egress only
  ``--host-uds=create`` (the runtime's listening socket in the socket directory);
- uid/gid 0 of gVisor's own kernel (``GVISOR_UID``: why not 65534) with an empty
  capability set and ``noNewPrivileges``; the same ``prlimit`` before the interpreter
  (gVisor enforces the rlimits itself);
- memory, pids and cpu limits: ``runsc`` runs with ``--ignore-cgroups`` *inside* the
  worker's host cgroup (``cgroups``), which it joins before ``runsc`` starts, so the
  Sentry, the gofer and their threads are all counted, as bubblewrap's processes are;
- host identity: ``runsc --rootless`` started as the tenant's own unprivileged host uid
  (``workers`` switches to it with ``setpriv``, as for bubblewrap). gVisor maps that uid to
  root of its own user namespace; a Sentry escape lands as that uid, owning nothing.

The seccomp allowlist of ``seccomp`` is not installed: tenant system calls never reach the
host kernel, they are served by the Sentry, which runs under gVisor's own seccomp filter.
``/proc`` is gVisor's synthetic one (no kcore, keys, sysrq-trigger...), and ``/sys`` an
empty read-only tmpfs (gVisor would otherwise make its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from . import reaping, scheduling
from .cgroups import Cgroup
from .commands import (
    CODE_MOUNT,
    DEPS_MOUNT,
    EGRESS_MOUNT,
    RUNTIME_MOUNT,
    SOCKET_MOUNT,
    SOCKET_NAME,
    TMP_MOUNT,
    HostLayout,
    MiB,
    prlimit_args,
    reachable_by_others,
    runtime_args,
    worker_env,
)
from .specs import Limits, SandboxSpec

Platform = Literal["systrap", "kvm", "ptrace"]
_ETC_DIR = Path(__file__).parent / "etc"
#: the function's uid and gid inside gVisor: rootless runsc maps the tenant's host uid to
#: the Sentry's 0 and nothing else, and its gofer creates the worker's socket on the host
#: as the caller's ids (65534 has no host id: the gofer dies creating it). 0 with an empty
#: capability set and no new privileges: owner of the socket directory, /tmp and nothing
#: else writable; /proc/sys and the read-only binds refuse it (the security tests say so)
GVISOR_UID = 0
GVISOR_GID = 0
#: a KVM that cannot map the sandbox hangs rather than fails
_PROBE_TIMEOUT_S = 10.0
_KVM_DEVICE = "/dev/kvm"
#: where ``auto`` remembers, until the machine reboots, that KVM could not run this runsc
#: (a root-only tmpfs: nobody else can plant or link the note); not kept when not root
_NOTES_DIR = Path("/run/sless")
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


#: host tasks and memory of gVisor itself (Sentry, gofer, runsc; Go threads), on top of the
#: function's limits in the worker's host cgroup. The function's own processes are Sentry
#: tasks, not host ones: gVisor counts them against the OCI ``pids`` limit it is given.
SENTRY_THREADS = 192
SENTRY_MEMORY_MB = 96


def host_limits(limits: Limits) -> Limits:
    """The limits of the host cgroup that holds a gVisor worker: the function's plus what
    gVisor itself takes."""
    return replace(
        limits,
        memory_mb=limits.memory_mb + SENTRY_MEMORY_MB,
        max_processes=min(4096, limits.max_processes + SENTRY_THREADS),
    )


@dataclass(frozen=True)
class Gvisor:
    """Run workers under gVisor: the ``runsc`` binary and the platform it uses."""

    runsc: str
    platform: Platform = "systrap"


def runsc_argv(gvisor: Gvisor, spec: SandboxSpec, bundle: Path, container: str) -> list[str]:
    """``runsc run`` of ``bundle`` with its state under ``bundle/state``."""
    return [
        gvisor.runsc,
        "--rootless",
        "--ignore-cgroups",
        # never the host's network (rootless runsc cannot share it; no function is given
        # ``SandboxSpec.network``: egress goes through the proxy socket)
        "--network=none",
        f"--platform={gvisor.platform}",
        f"--host-uds={'all' if spec.egress_socket is not None else 'create'}",
        f"--root={bundle / 'state'}",
        "run",
        "--bundle",
        str(bundle),
        container,
    ]


def bundle_config(
    spec: SandboxSpec, *, runtimes_dir: Path, host: HostLayout, check: bool = False
) -> dict[str, Any]:
    """The OCI ``config.json`` of ``spec``'s worker (pure)."""
    env = worker_env(
        spec,
        code_dir=CODE_MOUNT,
        deps_dir=None if spec.deps_dir is None else DEPS_MOUNT,
        socket=f"{SOCKET_MOUNT}/{SOCKET_NAME}",
        egress_socket=None if spec.egress_socket is None else EGRESS_MOUNT,
    )
    args = prlimit_args(spec, host.prlimit) + runtime_args(spec, host, RUNTIME_MOUNT, check=check)
    no_caps: dict[str, list[str]] = {
        key: [] for key in ("bounding", "effective", "inheritable", "permitted", "ambient")
    }
    return {
        "ociVersion": "1.0.0",
        "process": {
            "user": {"uid": GVISOR_UID, "gid": GVISOR_GID},
            "args": args,
            "env": [f"{key}={value}" for key, value in sorted(env.items())],
            "cwd": CODE_MOUNT,
            "capabilities": no_caps,
            "noNewPrivileges": True,
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "sless",
        "mounts": _mounts(spec, host, runtimes_dir / spec.runtime),
        "linux": {
            "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
        },
    }


def _bind(source: Path | str, destination: str, *, writable: bool = False) -> dict[str, Any]:
    options = ["rbind", "nosuid", "nodev", "rw" if writable else "ro"]
    return {"destination": destination, "type": "bind", "source": str(source), "options": options}


def _mounts(spec: SandboxSpec, host: HostLayout, server_dir: Path) -> list[dict[str, Any]]:
    mounts: list[dict[str, Any]] = [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]},
        {
            "destination": TMP_MOUNT,
            "type": "tmpfs",
            "source": "tmpfs",
            "options": ["nosuid", "nodev", f"size={spec.limits.tmp_size_mb * MiB}"],
        },
        # gVisor makes a synthetic /sys when the spec has none: an empty one instead
        {"destination": "/sys", "type": "tmpfs", "source": "tmpfs", "options": ["ro", "size=4k"]},
        _bind("/usr", "/usr"),
    ]
    mounts += [_bind(top, top) for top in host.root_dirs]
    prefix = host.python_prefix if spec.runtime == "python3.11" else host.node.parent.parent
    if not prefix.is_relative_to("/usr"):
        mounts.append(_bind(prefix, str(prefix)))
    if not host.prlimit.is_relative_to("/usr"):
        mounts.append(_bind(host.prlimit, str(host.prlimit)))
    for name in ("passwd", "group", "hosts", "nsswitch.conf"):
        mounts.append(_bind(_ETC_DIR / name, f"/etc/{name}"))
    for path in ("/etc/ld.so.cache", "/etc/ssl", "/etc/ca-certificates"):
        if os.path.exists(path):
            mounts.append(_bind(path, path))
    mounts.append(_bind(server_dir, RUNTIME_MOUNT))
    mounts.append(_bind(spec.code_dir, CODE_MOUNT))
    if spec.deps_dir is not None:
        mounts.append(_bind(spec.deps_dir, DEPS_MOUNT))
    mounts.append(_bind(spec.socket_dir, SOCKET_MOUNT, writable=True))
    if spec.egress_socket is not None:
        mounts.append(_bind(spec.egress_socket, EGRESS_MOUNT, writable=True))
    return mounts


def rootfs_links(host: HostLayout) -> Mapping[str, str]:
    """The symlinks of the bundle's root (merged /usr): ``{"bin": "usr/bin", ...}``."""
    return {top.lstrip("/"): target for top, target in host.root_symlinks.items()}


def runsc_available(runsc: str, platform: str = "auto") -> tuple[Gvisor | None, str]:
    """``(Gvisor, "")`` when ``runsc`` exists, the workers' uids may execute it, and it runs
    a sandbox on this host; else ``(None, one-line reason)``.

    ``auto`` picks KVM when a sandbox actually starts on it (``/dev/kvm`` present is not
    enough: a VM's KVM may have too few memory slots), else systrap; a KVM that failed for
    this runsc is not tried again until the machine reboots. Never a fallback to another
    isolation: the caller refuses to start when this fails."""
    path = shutil.which(runsc)
    if path is None:
        return None, f"gVisor's runsc ({runsc}) not found: set SLESS_SANDBOX_RUNSC"
    real = Path(path).resolve()
    if os.geteuid() == 0 and not (reachable_by_others(real) and real.stat().st_mode & 0o001):
        return None, f"{real} is not executable by the workers' uids: install runsc elsewhere"
    candidates: list[Platform]
    if platform == "auto":
        candidates = ["kvm", "systrap"] if os.path.exists(_KVM_DEVICE) else ["systrap"]
        if candidates[0] == "kvm" and _kvm_failed_before(real):
            candidates = ["systrap"]
    elif platform in ("systrap", "kvm", "ptrace"):
        candidates = [platform]  # type: ignore[list-item]
    else:
        return None, f"unknown gVisor platform {platform!r}"
    last = ""
    for candidate in candidates:
        ok, last = _probe(str(real), candidate)
        if ok:
            return Gvisor(runsc=str(real), platform=candidate), ""
        if platform == "auto" and candidate == "kvm":
            _note_kvm_failed(real)
    return None, f"{real} cannot start a sandbox ({candidates[-1]}): {last}"


def _kvm_note(runsc: Path) -> tuple[Path, str] | None:
    """The note's path, and what it must say for this boot and this very runsc binary
    (None: no place to keep it)."""
    if os.geteuid() != 0:
        return None
    try:
        stat = runsc.stat()
        boot = _BOOT_ID.read_text().strip()
    except OSError:
        return None
    return _NOTES_DIR / "gvisor-kvm-failed", f"{boot} {runsc} {stat.st_size} {stat.st_mtime_ns}\n"


def _kvm_failed_before(runsc: Path) -> bool:
    """KVM's probe failed for this runsc since the machine started: a VM's KVM that hangs
    does not heal, and each new try costs ``_PROBE_TIMEOUT_S`` of every start."""
    note = _kvm_note(runsc)
    if note is None:
        return False
    path, says = note
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd) as found:
        return found.read() == says


def _note_kvm_failed(runsc: Path) -> None:
    note = _kvm_note(runsc)
    if note is None:
        return
    path, says = note
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as written:
            written.write(says)


def _probe(runsc: str, platform: Platform) -> tuple[bool, str]:
    """Run ``true`` in a throwaway rootless sandbox on ``platform``."""
    argv = [runsc, "--rootless", "--network=none", "--ignore-cgroups", f"--platform={platform}"]
    argv += ["do", "true"]
    unshare = shutil.which("unshare")
    if os.geteuid() == 0 and unshare is not None:
        # a probe that hangs (KVM on a VM) is killed at its timeout, and runsc then leaves
        # the network namespace it bound under /tmp mounted: in a mount namespace of the
        # probe's own, that mount ends with it
        argv = [unshare, "--mount", "--propagation", "private", *argv]
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()
        return False, (tail[-1] if tail else f"exit status {done.returncode}")[:300]
    return True, ""


def write_bundle(
    bundle: Path, config: Mapping[str, Any], host: HostLayout, host_ids: tuple[int, int] | None
) -> None:
    """``bundle/config.json``, an empty ``rootfs`` of mount points, and ``state`` (runsc's
    root, writable by the worker's uid). Outside the sandbox: nothing in it is mounted."""
    rootfs = bundle / "rootfs"
    rootfs.mkdir(parents=True, mode=0o755)
    bundle.chmod(0o755)
    for name, target in rootfs_links(host).items():
        (rootfs / name).symlink_to(target)
    for mount in config["mounts"]:
        point = rootfs / mount["destination"].lstrip("/")
        if point.parent != rootfs:
            point.parent.mkdir(parents=True, exist_ok=True)
        if point.exists() or point.is_symlink():
            continue
        if mount["type"] == "bind" and not Path(mount["source"]).is_dir():
            point.touch()
        else:
            point.mkdir(parents=True)
    (bundle / "config.json").write_text(json.dumps(config))
    state = bundle / "state"
    state.mkdir(mode=0o700)
    if host_ids is not None:
        os.chown(state, *host_ids)


async def spawn(
    gvisor: Gvisor,
    host: HostLayout,
    runtimes_dir: Path,
    check: bool,
    spec: SandboxSpec,
    *,
    credentials: list[str],
    cgroup: Cgroup | None,
    stdout: int,
    stderr: int,
) -> tuple[asyncio.subprocess.Process, Path]:
    """Start ``runsc run`` as the tenant's uid, inside ``cgroup`` before it runs: a shell
    waits on a pipe (its stdin) until it has been moved into the cgroup, then becomes ``runsc``.
    Returns the process and the bundle directory (removed with the worker)."""
    config = bundle_config(spec, runtimes_dir=runtimes_dir, host=host, check=check)
    bundle = spec.socket_dir.with_name(f"{spec.socket_dir.name}.oci")
    shutil.rmtree(bundle, ignore_errors=True)
    ids = None if spec.host_ids is None or os.geteuid() != 0 else spec.host_ids
    write_bundle(bundle, config, host, None if ids is None else (ids.uid, ids.gid))
    block_r, block_w = os.pipe()
    try:
        argv = runsc_argv(gvisor, spec, bundle, _container_id(spec))
        process = await reaping.spawned(
            asyncio.create_subprocess_exec(
                *credentials,
                "/bin/sh",
                "-c",
                'read -r _; exec "$@" </dev/null',
                "sless-runsc",
                *argv,
                stdin=block_r,
                stdout=stdout,
                stderr=stderr,
                env={"PATH": "/usr/bin:/bin"},
                cwd="/",
                start_new_session=True,
            )
        )
    except BaseException:
        os.close(block_w)  # no process to hand on (``reaping.spawned`` killed any)
        raise
    finally:
        os.close(block_r)
    try:
        if cgroup is not None:
            with contextlib.suppress(ProcessLookupError):
                cgroup.add(process.pid)
    except BaseException:
        # the shell still waits for its line: killed before runsc could start (``reaping``)
        reaping.kill_group(process)
        os.close(block_w)
        await reaping.reap(process)
        raise
    scheduling.as_batch(process.pid)  # runsc and its sandbox inherit it
    with contextlib.suppress(OSError):
        os.write(block_w, b"1\n")
    os.close(block_w)
    return process, bundle


def _container_id(spec: SandboxSpec) -> str:
    # runsc ids: [A-Za-z0-9_.-]; the spec's name already is (specs._NAME_RE)
    return spec.name

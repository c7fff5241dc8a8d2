"""What a sandboxed worker is: its limits and its launch specification.

Both are plain frozen dataclasses, validated on construction, so that a spec that reaches
``build_command`` can be turned into arguments without further checks. Names and
environment keys end up in paths (cgroup directories) and in bubblewrap arguments, so they
are checked against allowlists here, once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Protocol

Runtime = Literal["python3.11", "nodejs20"]
RUNTIMES: tuple[Runtime, ...] = ("python3.11", "nodejs20")

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
#: environment keys the sandbox sets itself; a function's env may not override them
RESERVED_ENV_PREFIXES = ("SLESS_",)
RESERVED_ENV_KEYS = frozenset(
    {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "NODE_PATH"}
)


@dataclass(frozen=True)
class Limits:
    """Resource limits of one worker (the whole sandbox, not one invocation)."""

    memory_mb: int = 128
    #: CPU seconds for the worker's lifetime (RLIMIT_CPU); None = no limit
    cpu_seconds: int | None = None
    max_processes: int = 64
    max_open_files: int = 256
    tmp_size_mb: int = 64

    def __post_init__(self) -> None:
        if not 16 <= self.memory_mb <= 64 * 1024:
            raise ValueError("memory_mb must be between 16 and 65536")
        if self.cpu_seconds is not None and self.cpu_seconds < 1:
            raise ValueError("cpu_seconds must be positive")
        if not 4 <= self.max_processes <= 4096:
            raise ValueError("max_processes must be between 4 and 4096")
        if not 32 <= self.max_open_files <= 65536:
            raise ValueError("max_open_files must be between 32 and 65536")
        if not 1 <= self.tmp_size_mb <= 16 * 1024:
            raise ValueError("tmp_size_mb must be between 1 and 16384")


@dataclass(frozen=True)
class HostIds:
    """The unprivileged host uid and gid a tenant's workers run as (``sless.sandbox.uids``):
    the sandbox's uid 65534 maps to ``uid`` on the host, its gid 65534 to ``gid``."""

    uid: int
    gid: int

    def __post_init__(self) -> None:
        # 0 is root; below 1000 are the host's system accounts; 65534 is nobody, which
        # every unsandboxed daemon that "drops privileges" shares
        for label, value in (("uid", self.uid), ("gid", self.gid)):
            if not 1000 <= value < 2**32 - 1 or value == 65534:
                raise ValueError(f"{label} {value} is not a tenant's unprivileged host id")


class LogSink(Protocol):
    """Where workers' stdout and stderr go when the platform carries them to ``log_file``
    itself (embedded mode: ``sless.backends.local.logpump``, which bounds them)."""

    def open(self) -> int:
        """A new write end for one worker (the caller closes it)."""
        ...

    def flush(self) -> None:
        """Put what the workers wrote so far into ``log_file``."""
        ...


@dataclass(frozen=True)
class SandboxSpec:
    """Everything needed to launch one worker of one function version."""

    #: worker name, unique in its gateway, e.g. ``ns.fn.v<sha8>.<n>``: log lines, and its
    #: cgroups' name unless another process's groups hold it (``cgroups``: then suffixed)
    name: str
    runtime: Runtime
    #: bind-mounted read-only at /code
    code_dir: Path
    #: bind-mounted read-only at /deps
    deps_dir: Path | None
    entrypoint: str
    #: the function's own environment; the SLESS_* runtime settings are added on launch.
    #: Out of ``repr``: it carries the values of the function's secrets.
    env: Mapping[str, str] = field(repr=False)
    #: host directory bind-mounted read-write at /run/sless; the runtime listens on
    #: /run/sless/worker.sock inside it
    socket_dir: Path
    #: stdout and stderr of the worker are appended here (through ``log_sink`` if set)
    log_file: Path
    limits: Limits = field(default_factory=Limits)
    #: False: own network namespace with only loopback
    network: bool = False
    #: host path of an egress proxy socket (sless.sandbox.egress) to offer the worker
    #: on 127.0.0.1:3128; None = no way out at all
    egress_socket: Path | None = None
    timeout_s: float = 30.0
    concurrency: int = 1
    #: shown to the function as SLESS_FUNCTION / SLESS_NAMESPACE
    function: str = ""
    #: the SLESS_INTERFACE* variables that pick the runtime server's handler adapter
    #: (``FunctionSpec.interface_env``); empty: the ``sless`` contract
    interface_env: Mapping[str, str] = field(default_factory=dict)
    namespace: str = ""
    #: a generic worker of the pre-started pool (``prestarting``): no function yet, empty
    #: code and deps directories, no address-space limit until it is specialized
    prestarted: bool = False
    #: the tenant's own host uid and gid; None only where the gateway is not root (it then
    #: cannot switch uid and every worker runs as the gateway's uid): ``workers`` refuses
    #: to start a worker as host root
    host_ids: HostIds | None = None
    log_sink: LogSink | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name) or ".." in self.name:
            raise ValueError("name must be 1-200 characters of [A-Za-z0-9._-] without '..'")
        if self.runtime not in RUNTIMES:
            raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}")
        for label, path in (
            ("code_dir", self.code_dir),
            ("socket_dir", self.socket_dir),
            ("log_file", self.log_file),
            ("deps_dir", self.deps_dir),
        ):
            if path is not None and not path.is_absolute():
                raise ValueError(f"{label} must be an absolute path")
        for key, value in self.env.items():
            if not _ENV_KEY_RE.match(key):
                raise ValueError(f"invalid environment variable name {key[:40]!r}")
            if key in RESERVED_ENV_KEYS or key.startswith(RESERVED_ENV_PREFIXES):
                raise ValueError(f"environment variable {key} is reserved")
            if "\0" in value:
                raise ValueError(f"environment variable {key} contains a NUL byte")
        if not 0 < self.timeout_s <= 24 * 3600:
            raise ValueError("timeout_s must be positive")
        if not 1 <= self.concurrency <= 1024:
            raise ValueError("concurrency must be between 1 and 1024")
        # a frozen, private copy: the caller's dict cannot change what is launched
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))

    def open_log(self) -> int:
        """A write end for the worker's stdout and stderr (the caller closes it)."""
        if self.log_sink is not None:
            return self.log_sink.open()
        return os.open(self.log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)

    @property
    def socket_path(self) -> Path:
        """Host path of the worker's Unix socket."""
        return self.socket_dir / "worker.sock"

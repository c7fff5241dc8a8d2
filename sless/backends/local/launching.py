"""Starting one worker of a function in embedded mode: its sandbox spec and its secrets.

``WorkerLauncher`` turns (function, build, serial) into a ``SandboxSpec`` and a running
``Worker``: from the pre-started pool when one fits (``sless.sandbox.PrestartPool``), else
a bubblewrap sandbox of its own. The spec's environment carries the function's secrets,
revealed here from the encrypted store and handed to the sandbox in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from pathlib import Path

from pydantic import SecretStr

from sless.backends.local.building import Build
from sless.backends.local.logfiles import LogFiles
from sless.config import Settings
from sless.errors import UpstreamError
from sless.models import FunctionSpec, endings
from sless.sandbox import (
    Limits,
    PrestartPool,
    SandboxSpec,
    Worker,
    WorkerStartError,
    start_worker,
)
from sless.store import SecretRepository

log = logging.getLogger(__name__)


def version_of(spec: FunctionSpec, secret_stamps: dict[str, str] | None = None) -> str:
    """A digest of everything that shapes a worker: code, env, limits, and when each of its
    secrets was last written (not their values: a digest of a short value could be
    brute-forced from a log line)."""
    shape = {"spec": spec.model_dump(mode="json"), "secrets": secret_stamps or {}}
    text = json.dumps(shape, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class MissingSecrets(Exception):
    """A function names secrets that no longer exist (deleted after its PUT)."""


class WorkerLauncher:
    def __init__(
        self,
        settings: Settings,
        secrets: SecretRepository,
        logs: LogFiles,
        runtimes_dir: Path,
    ) -> None:
        self.settings = settings
        self.secrets = secrets
        self.logs = logs
        self.runtimes_dir = runtimes_dir
        #: where worker sockets go (set by the backend's start: a short path under /tmp)
        self.run_dir: Path | None = None
        #: generic workers that a function's first worker is made from (None: off)
        self.prestart: PrestartPool | None = None

    async def secret_env(
        self, namespace: str, spec: FunctionSpec
    ) -> tuple[dict[str, SecretStr], dict[str, str]]:
        """``env name → value`` of the spec's secrets, and when each was last written."""
        if not spec.secrets:
            return {}, {}
        found = await self.secrets.reveal_many(namespace, spec.secret_names())
        missing = sorted(set(spec.secret_names()) - set(found))
        if missing:
            raise MissingSecrets(f"secret {missing[0]!r} does not exist (any more)")
        env = {ref.env: found[ref.name][0] for ref in spec.secrets}
        stamps = {ref.name: found[ref.name][1].isoformat() for ref in spec.secrets}
        return env, stamps

    def short_path(self, identity: str, suffix: str) -> Path:
        """A path under the run dir short enough for a Unix socket (108 bytes)."""
        if self.run_dir is None:
            raise RuntimeError("backend not started")
        digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
        return self.run_dir / f"{digest}-{suffix}"

    def limits(self, memory_mb: int) -> Limits:
        sandbox = self.settings.sandbox
        return Limits(
            memory_mb=memory_mb,
            cpu_seconds=None,
            max_processes=sandbox.max_processes,
            max_open_files=sandbox.max_open_files,
            tmp_size_mb=sandbox.tmp_size_mb,
        )

    def sandbox_spec(
        self,
        namespace: str,
        name: str,
        spec: FunctionSpec,
        build: Build,
        *,
        serial: int,
        egress_socket: Path | None = None,
        secret_env: dict[str, SecretStr] | None = None,
    ) -> SandboxSpec:
        # the version is part of a worker's identity: two versions of one function serve
        # side by side (a traffic split), each with its own sockets and cgroups
        instance = f"{name}.{spec.version}" if spec.version else name
        socket_dir = self.short_path(f"{namespace}/{instance}", str(serial))
        socket_dir.mkdir(parents=True, exist_ok=True)
        log_file = self.logs.path(namespace, name)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        return SandboxSpec(
            name=f"{namespace}.{instance}.{serial}",
            runtime=spec.runtime.value,
            code_dir=build.code_dir,
            deps_dir=build.deps_dir,
            entrypoint=spec.entrypoint,
            env={
                **spec.env,
                **{k: v.get_secret_value() for k, v in (secret_env or {}).items()},
            },
            function=name,
            namespace=namespace,
            socket_dir=socket_dir,
            log_file=log_file,
            limits=self.limits(spec.memory_mb),
            # never the host's network: egress goes through the allowlisting proxy
            network=False,
            egress_socket=egress_socket,
            timeout_s=spec.timeout_s,
            concurrency=spec.concurrency,
        )

    async def start(
        self,
        namespace: str,
        name: str,
        spec: FunctionSpec,
        build: Build,
        serial: int,
        *,
        egress_socket: Path | None,
        secret_env: dict[str, SecretStr],
    ) -> Worker:
        sandbox_spec = self.sandbox_spec(
            namespace,
            name,
            spec,
            build,
            serial=serial,
            egress_socket=egress_socket,
            secret_env=secret_env,
        )
        if self.prestart is not None:
            worker = await self.prestart.take(sandbox_spec)
            if worker is not None:
                return worker
        sandbox = self.settings.sandbox
        try:
            return await start_worker(
                sandbox_spec,
                runtimes_dir=self.runtimes_dir,
                bwrap=sandbox.bwrap,
                unsafe_no_sandbox=sandbox.unsafe_no_sandbox,
                start_timeout_s=sandbox.start_timeout_s,
            )
        except WorkerStartError as e:
            log.warning("worker of %s/%s did not start: %s", namespace, name, e)
            reason = endings.did_not_start(e.ending, start_timeout_s=sandbox.start_timeout_s)
            # after the worker's own last lines, which start_worker left in the log
            with contextlib.suppress(OSError):  # best effort: the caller still learns why
                self.logs.append(namespace, name, endings.log_line(reason))
            raise UpstreamError(
                f"the function failed: {reason}", details={"reason": reason}
            ) from None

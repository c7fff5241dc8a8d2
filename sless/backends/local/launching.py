"""Starting one worker of a function in embedded mode: its sandbox spec and its secrets.

``WorkerLauncher`` turns (function, build, serial) into a ``SandboxSpec`` and a running
``Worker``: from the pre-started pool when one fits (``sless.sandbox.PrestartPool``), else
a bubblewrap sandbox of its own. The spec's environment carries the function's secrets,
revealed here from the encrypted store and handed to the sandbox in memory only.

Host identity and files (when the gateway runs as root): a worker runs as its namespace's
own host uid and gid (``uids``). It reads its build through the tenant's *view*: a
directory ``<run dir>/t<uid>/`` (root-owned, group the tenant's gid, mode 0750) holding
hard links of the builds it uses. The builds themselves and the data dir stay private to
the gateway's uid; the run dir is searchable only (0711), so no uid can list it and a
tenant's uid can enter its own view only. Socket directories belong to the worker's uid
(0700), the function's egress proxy socket to the tenant's gid (0660).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from pydantic import SecretStr

from sless.backends.local.building import Build
from sless.backends.local.logfiles import LogFiles
from sless.backends.local.uids import SandboxUids
from sless.config import Settings
from sless.errors import UpstreamError
from sless.models import FunctionSpec, endings
from sless.sandbox import (
    Gvisor,
    HostIds,
    Limits,
    PrestartPool,
    SandboxSpec,
    Worker,
    WorkerStartError,
    link_tree,
    runsc_available,
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
        #: gVisor for every worker (``choose_isolation``); None: bubblewrap
        self.isolation: Gvisor | None = None
        #: generic workers that a function's first worker is made from (None: off)
        self.prestart: PrestartPool | None = None
        #: each namespace's host uid (None: the gateway cannot switch uid)
        self.uids: SandboxUids | None = None

    async def choose_isolation(self) -> None:
        """The one place the isolation is chosen: gVisor when the settings ask for it, and
        then only a runsc that starts a sandbox here (``WorkerStartError`` otherwise: never
        bubblewrap in its place)."""
        sandbox = self.settings.sandbox
        if sandbox.isolation != "gvisor" or sandbox.unsafe_no_sandbox:
            self.isolation = None
            return
        gvisor, reason = await asyncio.to_thread(
            runsc_available, sandbox.runsc, sandbox.runsc_platform
        )
        if gvisor is None:
            raise WorkerStartError(f"gVisor isolation is set but unusable: {reason}")
        self.isolation = gvisor

    async def host_ids(self, namespace: str) -> HostIds | None:
        """The host uid/gid of ``namespace``'s workers (None: the gateway's own); its
        pre-started workers are kept from now on."""
        if self.uids is None:
            return None
        ids = await self.uids.ids(namespace)
        if self.prestart is not None:
            self.prestart.want(ids, namespace)
        return ids

    def view(self, build: Build, host_ids: HostIds | None) -> Build:
        """``build`` as the workers of ``host_ids`` read it (see the module docstring);
        made once per tenant and build while the gateway runs."""
        if host_ids is None:
            return build
        if self.run_dir is None:
            raise RuntimeError("backend not started")
        root = self.run_dir / f"t{host_ids.uid}"
        if not root.exists():
            root.mkdir(mode=0o750)
            os.chown(root, 0, host_ids.gid)
        view = Build(root / build.root.name)
        if (view.root / ".complete").exists():
            return view
        staging = Path(tempfile.mkdtemp(prefix=".view-", dir=root))
        try:
            staging.chmod(0o755)
            for part in ("code", "deps"):
                if (build.root / part).is_dir():
                    link_tree(build.root / part, staging / part)
            (staging / ".complete").touch()
            if view.root.exists():
                shutil.rmtree(view.root)
            staging.rename(view.root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return view

    def drop_views(self, build_name: str) -> None:
        """Remove every tenant's view of a build that is being removed."""
        if self.run_dir is not None:
            for view in self.run_dir.glob(f"t*/{build_name}"):
                shutil.rmtree(view, ignore_errors=True)

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
        host_ids: HostIds | None = None,
    ) -> SandboxSpec:
        # the version is part of a worker's identity: two versions of one function serve
        # side by side (a traffic split), each with its own sockets and cgroups
        instance = f"{name}.{spec.version}" if spec.version else name
        socket_dir = self.short_path(f"{namespace}/{instance}", str(serial))
        socket_dir.mkdir(parents=True, exist_ok=True)
        log_file = self.logs.path(namespace, name)
        log_file.parent.mkdir(parents=True, exist_ok=True)
        build = self.view(build, host_ids)
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
            interface_env=spec.interface_env(),
            socket_dir=socket_dir,
            log_file=log_file,
            log_sink=self.logs.sink(namespace, name),
            limits=self.limits(spec.memory_mb),
            # never the host's network: egress goes through the allowlisting proxy
            network=False,
            egress_socket=egress_socket,
            timeout_s=spec.timeout_s,
            concurrency=spec.concurrency,
            host_ids=host_ids,
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
            host_ids=await self.host_ids(namespace),
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
                seccomp=sandbox.seccomp,
                isolation=self.isolation,
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

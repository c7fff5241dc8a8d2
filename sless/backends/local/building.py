"""Builds for embedded mode: code extracted from its blob plus dependencies, per version.

A build lives in ``<data_dir>/builds/<runtime>-<sha256>/`` with ``code/`` and ``deps/``
and is marked complete by a ``.complete`` file written last, so a crash half-way leaves a
directory that is rebuilt, never one that is used. The same code is built once: a
completed build is reused by every function and every upload that has that digest.

No tenant code runs on the host during a build: Python dependencies are installed from
wheels only (``--only-binary :all:``: no ``setup.py`` is executed) and npm runs with
``--ignore-scripts``. The import check then runs inside the sandbox.

The manifests are a program for the installers, so they are checked first, here as at
upload (``sless.policies.manifests``: registry packages only, no option, URL, path or
installer config), and the installer never runs on a manifest that fails.

When the gateway is root, the installer runs as the tenant's own unprivileged host uid and
gid (``uids``), never as root, through ``setpriv`` (no supplementary groups, no new
privileges) inside a pid namespace of its own (``unshare --pid --kill-child``: nothing it
starts outlives it) and a network namespace whose only way out is a proxy to the
configured registry or index (``installer_network``). It works in ``<work>/t<uid>/``:
the tenant's own caches (``cache/``, its uid's, 0700: no tenant reads or poisons
another's) and one staging directory per build (root, group the tenant's gid, 0750)
holding the code (root's) and ``deps/`` and ``home/`` (the uid's). ``<work>`` is
``<data_dir>/build-work`` when every ancestor is searchable, else under the gateway's run
dir. Once the installer has exited, ``deps/`` is made root's (``lchown``), without setuid,
setgid or sticky bits and not writable by others, and any file that is not a directory,
regular file or symlink, or that has a second hard link, fails the build; then it moves
into ``builds/`` (the gateway's alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sless.backends.local.installer_network import (
    PROXY_ENV,
    confined,
    index_destinations,
    registry_destinations,
)
from sless.config import BuildSettings, ValidationSettings
from sless.models import Runtime
from sless.sandbox import HostIds, HostLayout
from sless.store import BlobStore
from sless.tasks import wait_for
from sless.validation import Verdict, dependency_violations, extract_archive

log = logging.getLogger(__name__)

_OUTPUT_TAIL = 1500
_VIOLATIONS_SHOWN = 10
#: how the host reaches package indexes (proxies, CA bundles, index mirrors, or a local
#: wheelhouse with UV_FIND_LINKS and UV_OFFLINE=1 on a machine with no index): passed to
#: the installers; nothing else of the gateway's environment (its secrets) is. The npm
#: registry is ``SLESS_VALIDATION_NPM_REGISTRY``, the one lockfiles are checked against.
_PASSTHROUGH_ENV = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_INDEX",
    "UV_FIND_LINKS",
    "UV_OFFLINE",
    "UV_NATIVE_TLS",
)
#: the host's proxies: for an installer with the host's network only (the gateway is not
#: root); a confined one goes through the build proxy (``installer_network``)
_PROXY_PASSTHROUGH = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)


class BuildError(Exception):
    """The build failed for a reason the tenant can act on; the message is shown."""


@dataclass(frozen=True)
class Build:
    root: Path

    @property
    def code_dir(self) -> Path:
        return self.root / "code"

    @property
    def deps_dir(self) -> Path:
        return self.root / "deps"


@dataclass(frozen=True)
class _Workspace:
    """Where one build's installer runs: ``deps`` and ``home`` are its uid's."""

    staging: Path
    cache: Path
    ids: HostIds | None

    @property
    def code(self) -> Path:
        return self.staging / "code"

    @property
    def deps(self) -> Path:
        return self.staging / "deps"

    @property
    def home(self) -> Path:
        return self.staging / "home"


class Builder:
    def __init__(
        self,
        root: Path,
        blobs: BlobStore,
        settings: BuildSettings,
        archive_settings: ValidationSettings,
    ) -> None:
        self.root = root
        self.blobs = blobs
        self.settings = settings
        self.archive_settings = archive_settings
        #: where tenants' installers work (``start``); None: under ``root``, as the
        #: gateway's own uid (it is not root)
        self.work: Path | None = None
        #: the interpreter dependencies are installed for
        self.python = sys.executable
        self._locks: dict[str, asyncio.Lock] = {}
        #: ``(runtime, result) → (builds, seconds in all)`` of the builds that ran
        #: (``result``: ``succeeded`` or ``failed``), for metrics
        self.durations: dict[tuple[str, str], tuple[int, float]] = {}

    def start(self, run_dir: Path) -> None:
        """Choose the work directory (see the module docstring; root only), and remove
        what builds that were cut off (a crash, a kill) left there."""
        if os.geteuid() != 0:
            _sweep([self.root], self.settings.timeout_s)
            return
        base = self.root.parent if _searchable(self.root.parent) else run_dir
        self.work = base / "build-work"
        self.work.mkdir(mode=0o711, exist_ok=True)
        os.chown(self.work, 0, 0)
        self.work.chmod(0o711)
        _sweep([self.root, *self.work.glob("t*"), self.work / "net"], self.settings.timeout_s)
        # the interpreter the sandbox runs tenant code with (the tenants' uids reach it)
        self.python = str(HostLayout.discover().python_prefix / "bin" / "python3.11")

    def _tool(self, name: str) -> str:
        """``name`` as the tenants' uids can execute it: a single-file installer (uv)
        under a private directory (``~/.local/bin`` of root) is copied, root's, 0755, to
        ``<work>/bin`` once."""
        found = shutil.which(name)
        if self.work is None or found is None or _searchable(Path(found).resolve()):
            return found or name
        source = Path(found).resolve()
        copy = self.work / "bin" / source.name
        if not copy.exists() or copy.stat().st_size != source.stat().st_size:
            copy.parent.mkdir(mode=0o755, exist_ok=True)
            partial = copy.with_name(f".{copy.name}.{os.getpid()}")
            shutil.copyfile(source, partial)
            partial.chmod(0o755)
            partial.rename(copy)
        return str(copy)

    @property
    def builds_run(self) -> int:
        """How many builds ran to completion (not reused); observable by tests."""
        return sum(n for (_, result), (n, _) in self.durations.items() if result == "succeeded")

    def path_for(self, runtime: Runtime, sha256: str) -> Build:
        return Build(self.root / f"{runtime.value}-{sha256}")

    async def ensure_built(self, runtime: Runtime, sha256: str, host_ids: HostIds | None) -> Build:
        """The build of ``sha256``, made (its installer running as ``host_ids``, the
        tenant's) unless a complete one exists."""
        build = self.path_for(runtime, sha256)
        lock = self._locks.setdefault(build.root.name, asyncio.Lock())
        async with lock:
            if (build.root / ".complete").exists():
                return build
            started = time.monotonic()
            result = "failed"
            try:
                await self._build(runtime, sha256, build, host_ids)
                result = "succeeded"
            finally:
                count, seconds = self.durations.get((runtime.value, result), (0, 0.0))
                elapsed = time.monotonic() - started
                self.durations[(runtime.value, result)] = (count + 1, seconds + elapsed)
            return build

    async def _build(
        self, runtime: Runtime, sha256: str, build: Build, host_ids: HostIds | None
    ) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        space = await asyncio.to_thread(self._workspace, build.root.name, host_ids)
        try:
            data = await self.blobs.get(sha256)
            extracted = await asyncio.to_thread(
                extract_archive, data, space.code, self.archive_settings.archive
            )
            if extracted.stage.verdict is Verdict.REJECT:
                raise BuildError("stored code failed the archive check again")
            refused = await asyncio.to_thread(
                dependency_violations, space.code, self.archive_settings.npm_registry
            )
            if refused:
                raise BuildError(
                    "the dependency manifests ask for what builds never do (only registry "
                    "packages are installed):\n" + "\n".join(refused[:_VIOLATIONS_SHOWN])
                )
            if runtime is Runtime.PYTHON311:
                await self._python_deps(space)
            else:
                await self._node_deps(space)
            if space.ids is not None:
                await asyncio.to_thread(_seal, space)
            await asyncio.to_thread(_publish, space.staging, build.root, sha256)
        finally:
            shutil.rmtree(space.staging, ignore_errors=True)

    def _workspace(self, name: str, ids: HostIds | None) -> _Workspace:
        """A fresh staging directory (and the cache) for one build as ``ids``."""
        if self.work is None or ids is None:
            if os.geteuid() == 0:
                raise BuildError("refusing to run an installer as host root (no host uid)")
            staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=self.root))
            space = _Workspace(staging, self.root / ".cache", None)
            space.deps.mkdir()
            space.home.mkdir()
            return space
        tenant = self.work / f"t{ids.uid}"
        tenant.mkdir(mode=0o750, exist_ok=True)
        os.chown(tenant, 0, ids.gid)
        space = _Workspace(
            Path(tempfile.mkdtemp(prefix=f".{name}.", dir=tenant)), tenant / "cache", ids
        )
        os.chown(space.staging, 0, ids.gid)
        space.staging.chmod(0o750)
        for own in (space.cache, space.deps, space.home):
            own.mkdir(mode=0o700, exist_ok=True)
            os.chown(own, ids.uid, ids.gid)
            own.chmod(0o700)
        return space

    async def _python_deps(self, space: _Workspace) -> None:
        requirements = space.code / "requirements.txt"
        if not requirements.is_file() or not requirements.read_text().strip():
            return
        await self._run(
            [
                self._tool(self.settings.uv),
                "pip",
                "install",
                "--quiet",
                "--no-config",
                "--only-binary",
                ":all:",
                "--python",
                self.python,
                "--target",
                str(space.deps),
                "-r",
                str(requirements),
            ],
            space=space,
            cwd=space.home,
            what="installing requirements.txt",
            reach=index_destinations(os.environ),
        )

    async def _node_deps(self, space: _Workspace) -> None:
        manifest = space.code / "package.json"
        if not manifest.is_file():
            return
        for name in ("package.json", "package-lock.json"):
            if (space.code / name).is_file():
                target = space.deps / name
                shutil.copyfile(space.code / name, target)
                if space.ids is not None:
                    os.chown(target, space.ids.uid, space.ids.gid)
        await self._run(
            [
                self._tool(self.settings.npm),
                "install",
                "--ignore-scripts",
                "--omit=dev",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--loglevel=error",
                f"--registry={self.archive_settings.npm_registry}",
            ],
            space=space,
            cwd=space.deps,
            what="installing package.json dependencies",
            reach=registry_destinations(self.archive_settings.npm_registry),
        )

    async def _run(
        self,
        argv: list[str],
        *,
        space: _Workspace,
        cwd: Path,
        what: str,
        reach: list[tuple[str, int]],
    ) -> None:
        """Run an installer; as root, as the tenant's uid and able to reach only ``reach``."""
        if self.work is None or space.ids is None:
            # not root: the installer runs as the gateway's uid, with its network
            env = self._env(space, (*_PASSTHROUGH_ENV, *_PROXY_PASSTHROUGH))
            await self._installer(argv, [], env=env, cwd=cwd, what=what)
            return
        async with confined(self.work / "net", reach) as prefix:
            env = {**self._env(space, _PASSTHROUGH_ENV), **PROXY_ENV}
            command = [*_as_tenant(space.ids, prefix), *argv]
            await self._installer(command, reach, env=env, cwd=cwd, what=what)

    @staticmethod
    def _env(space: _Workspace, passthrough: tuple[str, ...]) -> dict[str, str]:
        return {
            **{k: v for k in passthrough if (v := os.environ.get(k))},
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(space.home),
            "UV_CACHE_DIR": str(space.cache / "uv"),
            # no hard link into the cache: the build is made root's afterwards
            "UV_LINK_MODE": "copy",
            "npm_config_cache": str(space.cache / "npm"),
            "npm_config_ignore_scripts": "true",
            "npm_config_userconfig": str(space.home / ".npmrc"),
        }

    async def _installer(
        self,
        command: list[str],
        allowed: list[tuple[str, int]],
        *,
        env: dict[str, str],
        cwd: Path,
        what: str,
    ) -> None:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await wait_for(process.communicate(), self.settings.timeout_s)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise BuildError(f"{what} timed out after {self.settings.timeout_s:.0f} s") from None
        if process.returncode != 0:
            tail = output.decode("utf-8", "replace")[-_OUTPUT_TAIL:].strip()
            reach = ", ".join(f"{host}:{port}" for host, port in allowed)
            where = f"\n(builds reach only {reach})" if allowed else ""
            raise BuildError(f"{what} failed:\n{tail}{where}")

    def remove(self, runtime: Runtime, sha256: str) -> None:
        shutil.rmtree(self.path_for(runtime, sha256).root, ignore_errors=True)


def _sweep(directories: list[Path], timeout_s: float) -> None:
    """Remove the staging directories and proxy sockets (their names start with a dot, or
    end in ``.sock``) under ``directories`` that are older than any build can run: another
    gateway process sharing the data dir may be building right now."""
    horizon = time.time() - timeout_s - 60
    for directory in directories:
        with contextlib.suppress(FileNotFoundError):
            for entry in directory.iterdir():
                left = entry.name.startswith(".") and entry.name != ".cache"
                if not (left or entry.suffix == ".sock") or entry.lstat().st_mtime > horizon:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
                log.info("removed %s, left by a build that was cut off", entry)


def _searchable(path: Path) -> bool:
    """Whether a uid that owns nothing can pass through ``path`` and all its ancestors."""
    try:
        return all(p.stat().st_mode & stat.S_IXOTH for p in [*path.parents, path])
    except OSError:
        return False


def _as_tenant(ids: HostIds, confine: list[str]) -> list[str]:
    """The prefix that runs an installer as the tenant's ids in a pid namespace of its
    own (everything it started dies with it) and a network namespace whose only way out
    is ``confine``'s proxy (``installer_network``)."""
    unshare = shutil.which("unshare") or "/usr/bin/unshare"
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [
        unshare,
        "--pid",
        "--fork",
        "--kill-child",
        "--net",
        "--",
        *confine,
        setpriv,
        f"--reuid={ids.uid}",
        f"--regid={ids.gid}",
        "--clear-groups",
        "--no-new-privs",
        "--",
    ]


def _seal(space: _Workspace) -> None:
    """Make what the installer wrote root's and read-only to everyone else: no setuid,
    setgid or sticky bit, nothing but directories, regular files and symlinks, no file
    with a second hard link (one into a host file would hand that file over). Runs once
    the installer and everything it started are gone (its pid namespace)."""
    shutil.rmtree(space.home, ignore_errors=True)
    for top, dirs, files in os.walk(space.deps, followlinks=False):
        _seal_one(Path(top), directory=True)
        for name in [*dirs, *files]:
            path = Path(top) / name
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode):
                continue  # sealed when os.walk enters it
            if stat.S_ISLNK(info.st_mode):
                os.lchown(path, 0, 0)
            elif not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                raise BuildError(
                    f"the installed dependencies hold {path.relative_to(space.deps)}, which "
                    "is not a plain file: refused"
                )
            else:
                _seal_one(path, directory=False)


def _seal_one(path: Path, *, directory: bool) -> None:
    os.lchown(path, 0, 0)
    # not a symlink (checked), and nothing of the tenant's runs any more to swap it for one
    executable = directory or path.lstat().st_mode & 0o111
    os.chmod(path, 0o755 if executable else 0o644)


def _publish(staging: Path, root: Path, sha256: str) -> None:
    """Move the build into place, then mark it complete."""
    # the sandboxed worker (another uid) reads the build: world-readable, not writable
    os.chmod(staging, 0o755)  # noqa: S103
    if os.geteuid() == 0:
        os.chown(staging, 0, 0)
    if root.exists():
        shutil.rmtree(root)  # an incomplete earlier attempt
    try:
        staging.rename(root)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        # the work dir is on another file system (the run dir): copied, symlinks as such
        moving = root.with_name(f".{root.name}.moving")
        shutil.rmtree(moving, ignore_errors=True)
        shutil.copytree(staging, moving, symlinks=True)
        moving.rename(root)
    (root / ".complete").write_text(sha256)

"""Builds for embedded mode: code extracted from its blob plus dependencies, per version.

A build lives in ``<data_dir>/builds/<runtime>-<sha256>/`` with ``code/`` and ``deps/``
and is marked complete by a ``.complete`` file written last, so a crash half-way leaves a
directory that is rebuilt, never one that is used. The same code is built once: a
completed build is reused by every function and every upload that has that digest.

No tenant code runs on the host during a build: Python dependencies are installed from
wheels only (``--only-binary :all:``: no ``setup.py`` is executed) and npm runs with
``--ignore-scripts``. The import check then runs inside the sandbox.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sless.config import BuildSettings, ValidationSettings
from sless.models import Runtime
from sless.store import BlobStore
from sless.validation import Verdict, extract_archive

log = logging.getLogger(__name__)

_OUTPUT_TAIL = 1500
#: how the host reaches package indexes (proxies, CA bundles, index mirrors, or a local
#: wheelhouse with UV_FIND_LINKS and UV_OFFLINE=1 on a machine with no index): passed to
#: the installers; nothing else of the gateway's environment (its secrets) is
_PASSTHROUGH_ENV = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "UV_FIND_LINKS",
    "UV_OFFLINE",
    "UV_NATIVE_TLS",
    "npm_config_registry",
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
        self._locks: dict[str, asyncio.Lock] = {}
        #: ``(runtime, result) → (builds, seconds in all)`` of the builds that ran
        #: (``result``: ``succeeded`` or ``failed``), for metrics
        self.durations: dict[tuple[str, str], tuple[int, float]] = {}

    @property
    def builds_run(self) -> int:
        """How many builds ran to completion (not reused); observable by tests."""
        return sum(n for (_, result), (n, _) in self.durations.items() if result == "succeeded")

    def path_for(self, runtime: Runtime, sha256: str) -> Build:
        return Build(self.root / f"{runtime.value}-{sha256}")

    async def ensure_built(self, runtime: Runtime, sha256: str) -> Build:
        build = self.path_for(runtime, sha256)
        lock = self._locks.setdefault(build.root.name, asyncio.Lock())
        async with lock:
            if (build.root / ".complete").exists():
                return build
            started = time.monotonic()
            result = "failed"
            try:
                await self._build(runtime, sha256, build)
                result = "succeeded"
            finally:
                count, seconds = self.durations.get((runtime.value, result), (0, 0.0))
                elapsed = time.monotonic() - started
                self.durations[(runtime.value, result)] = (count + 1, seconds + elapsed)
            return build

    async def _build(self, runtime: Runtime, sha256: str, build: Build) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{build.root.name}.", dir=self.root))
        try:
            data = await self.blobs.get(sha256)
            extracted = await asyncio.to_thread(
                extract_archive, data, staging / "code", self.archive_settings.archive
            )
            if extracted.stage.verdict is Verdict.REJECT:
                raise BuildError("stored code failed the archive check again")
            deps = staging / "deps"
            deps.mkdir()
            if runtime is Runtime.PYTHON311:
                await self._python_deps(staging / "code", deps)
            else:
                await self._node_deps(staging / "code", deps)
            await asyncio.to_thread(_publish, staging, build.root, sha256)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    async def _python_deps(self, code: Path, deps: Path) -> None:
        requirements = code / "requirements.txt"
        if not requirements.is_file() or not requirements.read_text().strip():
            return
        await self._run(
            [
                self.settings.uv,
                "pip",
                "install",
                "--quiet",
                "--no-config",
                "--only-binary",
                ":all:",
                "--python",
                sys.executable,
                "--target",
                str(deps),
                "-r",
                str(requirements),
            ],
            cwd=code,
            what="installing requirements.txt",
        )

    async def _node_deps(self, code: Path, deps: Path) -> None:
        manifest = code / "package.json"
        if not manifest.is_file():
            return
        shutil.copy(manifest, deps / "package.json")
        lock = code / "package-lock.json"
        if lock.is_file():
            shutil.copy(lock, deps / "package-lock.json")
        await self._run(
            [
                self.settings.npm,
                "install",
                "--ignore-scripts",
                "--omit=dev",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--loglevel=error",
            ],
            cwd=deps,
            what="installing package.json dependencies",
        )

    async def _run(self, argv: list[str], *, cwd: Path, what: str) -> None:
        env = {
            **{k: v for k in _PASSTHROUGH_ENV if (v := os.environ.get(k))},
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(cwd),
            "UV_CACHE_DIR": str(self.root / ".cache" / "uv"),
            "npm_config_cache": str(self.root / ".cache" / "npm"),
        }
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), self.settings.timeout_s)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise BuildError(f"{what} timed out after {self.settings.timeout_s:.0f} s") from None
        if process.returncode != 0:
            tail = output.decode("utf-8", "replace")[-_OUTPUT_TAIL:].strip()
            raise BuildError(f"{what} failed:\n{tail}")

    def remove(self, runtime: Runtime, sha256: str) -> None:
        shutil.rmtree(self.path_for(runtime, sha256).root, ignore_errors=True)


def _publish(staging: Path, root: Path, sha256: str) -> None:
    """Mark the build complete and move it into place in one rename."""
    # the sandboxed worker (another uid) reads the build: world-readable, not writable
    os.chmod(staging, 0o755)  # noqa: S103
    (staging / ".complete").write_text(sha256)
    if root.exists():
        shutil.rmtree(root)  # an incomplete earlier attempt
    staging.rename(root)

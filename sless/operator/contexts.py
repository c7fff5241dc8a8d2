"""Build contexts in S3: the uploaded zip repacked as the tar.gz kaniko reads.

kaniko's ``s3://`` context must be a gzipped tar; uploads are zips (the gateway's blob at
``<prefix><sha256>.zip``). The operator repacks the zip once per (sha256, runtime) into
``<prefix>contexts/<sha256>-<runtime>.tar.gz`` with the rendered Dockerfile. The zip passed
archive safety at upload, but is treated as untrusted again here: only regular files with
relative, ``..``-free names, within the archive limits, are copied; a tenant's own
``Dockerfile`` or ``.dockerignore`` is dropped so that the platform's build recipe wins.
The dependency manifests must pass ``sless.policies.manifests`` again (the check made at
upload, made where the build starts): a context is never made for one that asks the
installers for a path, a URL or another registry.
Members get fixed owners, modes and times: the same zip always gives the same tar.

S3 is reached through ``sless.store.S3BlobStore``, the gateway's own client (one TLS,
retry and error rule); only the repacking is the operator's, in a worker thread.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import tarfile
import zipfile
from pathlib import PurePosixPath
from typing import Any

from sless.config import ArchiveLimits, S3Settings, ValidationSettings
from sless.models import Runtime
from sless.policies import context_key, dockerfile
from sless.policies.manifests import (
    MANIFEST_FILES,
    MAX_MANIFEST_BYTES,
    check_dependency_manifests,
)
from sless.store import S3BlobStore

_PLATFORM_FILES = {"Dockerfile", ".dockerignore"}


class ContextError(Exception):
    """The blob cannot be made into a build context (permanent)."""


def repack(
    zip_bytes: bytes, recipe: str, limits: ArchiveLimits, registry: str | None = None
) -> bytes:
    """zip → tar.gz with ``recipe`` as the Dockerfile. ContextError on anything unsafe;
    ``registry``: the npm registry lockfiles must resolve on."""
    out = io.BytesIO()
    total = 0
    manifests: dict[str, str | None] = {}
    try:
        archive = zipfile.ZipFile(io.BytesIO(zip_bytes))
    except zipfile.BadZipFile as e:
        raise ContextError("the code blob is not a zip archive") from e
    with (
        archive,
        gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > limits.max_files:
            raise ContextError("too many files in the code archive")
        for member in sorted(members, key=lambda m: m.filename):
            path = PurePosixPath(member.filename)
            if path.is_absolute() or ".." in path.parts or not path.parts:
                raise ContextError("unsafe path in the code archive")
            if (member.external_attr >> 16) & 0o170000 not in (0, 0o100000):
                raise ContextError("only regular files are allowed in the code archive")
            if str(path) in _PLATFORM_FILES:
                continue
            total += member.file_size
            if member.file_size > limits.max_file_bytes or total > limits.max_total_bytes:
                raise ContextError("the code archive is too large")
            data = archive.read(member)
            if str(path) in MANIFEST_FILES:
                small = len(data) <= MAX_MANIFEST_BYTES
                manifests[str(path)] = data.decode("utf-8", "replace") if small else None
            _add(tar, str(path), data)
        refused = check_dependency_manifests(
            manifests, registry or ValidationSettings().npm_registry
        )
        if refused:
            raise ContextError(
                "the dependency manifests ask for what builds never do: "
                + "; ".join(map(str, refused[:5]))
            )
        _add(tar, "Dockerfile", recipe.encode())
    return out.getvalue()


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


class BuildContexts:
    """Build contexts kept beside the code blobs, through the one S3 client
    (``sless.store.S3BlobStore``: its TLS, retries and error mapping)."""

    def __init__(
        self, s3: S3Settings, limits: ArchiveLimits, client: Any = None, registry: str | None = None
    ) -> None:
        if not s3.bucket:
            raise ValueError("Kubernetes mode needs an S3 bucket for code blobs (SLESS_S3_BUCKET)")
        self.s3 = s3
        self.limits = limits
        self.registry = registry
        self.blobs = S3BlobStore(s3, client)

    async def ensure(self, sha256: str, blob_key: str, runtime: Runtime, base_image: str) -> str:
        """The context's key, repacking the blob when it is not there yet."""
        key = context_key(self.s3, sha256, runtime)
        if await self.blobs.exists_key(key):
            return key
        body = await self.blobs.get_key(blob_key)
        recipe = dockerfile(runtime, base_image)
        packed = await asyncio.to_thread(repack, body, recipe, self.limits, self.registry)
        await self.blobs.put_key(key, packed)
        return key

    async def delete_code(self, sha256: str, blob_key: str) -> None:
        """The blob and every context made from it."""
        keys = [blob_key] + [context_key(self.s3, sha256, runtime) for runtime in Runtime]
        for key in keys:
            await self.blobs.delete_key(key)

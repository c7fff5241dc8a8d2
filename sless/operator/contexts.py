"""Build contexts in S3: the uploaded zip repacked as the tar.gz kaniko reads.

kaniko's ``s3://`` context must be a gzipped tar; uploads are zips (the gateway's blob at
``<prefix><sha256>.zip``). The operator repacks the zip once per (sha256, runtime) into
``<prefix>contexts/<sha256>-<runtime>.tar.gz`` with the rendered Dockerfile. The zip passed
archive safety at upload, but is treated as untrusted again here: only regular files with
relative, ``..``-free names, within the archive limits, are copied; a tenant's own
``Dockerfile`` or ``.dockerignore`` is dropped so that the platform's build recipe wins.
Members get fixed owners, modes and times: the same zip always gives the same tar.

boto3 is synchronous: every call runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import tarfile
import zipfile
from pathlib import PurePosixPath
from typing import Any

from sless.config import ArchiveLimits, S3Settings
from sless.models import Runtime
from sless.policies import context_key, dockerfile

_PLATFORM_FILES = {"Dockerfile", ".dockerignore"}


class ContextError(Exception):
    """The blob cannot be made into a build context (permanent)."""


def repack(zip_bytes: bytes, recipe: str, limits: ArchiveLimits) -> bytes:
    """zip → tar.gz with ``recipe`` as the Dockerfile. ContextError on anything unsafe."""
    out = io.BytesIO()
    total = 0
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
            _add(tar, str(path), data)
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
    def __init__(self, s3: S3Settings, limits: ArchiveLimits, client: Any = None) -> None:
        if not s3.bucket:
            raise ValueError("Kubernetes mode needs an S3 bucket for code blobs (SLESS_S3_BUCKET)")
        self.s3 = s3
        self.bucket = s3.bucket
        self.limits = limits
        self._client = client or _make_client(s3)

    async def _call(self, method: str, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self._client, method), **kwargs)

    async def _exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            await self._call("head_object", Bucket=self.bucket, Key=key)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    async def ensure(self, sha256: str, blob_key: str, runtime: Runtime, base_image: str) -> str:
        """The context's key, repacking the blob when it is not there yet."""
        key = context_key(self.s3, sha256, runtime)
        if await self._exists(key):
            return key
        response = await self._call("get_object", Bucket=self.bucket, Key=blob_key)
        body: bytes = await asyncio.to_thread(response["Body"].read)
        packed = await asyncio.to_thread(repack, body, dockerfile(runtime, base_image), self.limits)
        await self._call("put_object", Bucket=self.bucket, Key=key, Body=packed)
        return key

    async def delete_code(self, sha256: str, blob_key: str) -> None:
        """The blob and every context made from it."""
        keys = [blob_key] + [context_key(self.s3, sha256, runtime) for runtime in Runtime]
        for key in keys:
            await self._call("delete_object", Bucket=self.bucket, Key=key)


def _make_client(s3: S3Settings) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=s3.endpoint_url,
        region_name=s3.region,
        aws_access_key_id=s3.access_key_id.get_secret_value() if s3.access_key_id else None,
        aws_secret_access_key=(
            s3.secret_access_key.get_secret_value() if s3.secret_access_key else None
        ),
        config=Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 3}),
    )

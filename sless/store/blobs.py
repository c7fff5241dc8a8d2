"""Code blob stores: a local directory (embedded default) or S3 through boto3.

Blobs are content-addressed by the code's SHA-256, so a key never changes meaning and an
upload of code that is already stored writes nothing.
"""

from __future__ import annotations

import asyncio
import errno
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Protocol

from sless.config import S3Settings
from sless.errors import InsufficientStorage, StorageUnavailable

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def blob_key(sha256: str) -> str:
    if not _SHA256.match(sha256):
        raise ValueError("not a sha256 hex digest")
    return f"{sha256}.zip"


class BlobStore(Protocol):
    async def put(self, sha256: str, data: bytes) -> str: ...
    async def get(self, sha256: str) -> bytes: ...
    async def exists(self, sha256: str) -> bool: ...
    async def delete(self, sha256: str) -> None: ...


class LocalBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, sha256: str) -> Path:
        return self.root / blob_key(sha256)

    async def put(self, sha256: str, data: bytes) -> str:
        path = self._path(sha256)
        if not path.exists():
            try:
                await asyncio.to_thread(self._write_atomically, path, data)
            except OSError as e:
                if e.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise InsufficientStorage("no space left to store the code") from e
                raise
        return blob_key(sha256)

    @staticmethod
    def _write_atomically(path: Path, data: bytes) -> None:
        # the gateway's alone (0700): the data dir is searchable by the tenants' uids
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get(self, sha256: str) -> bytes:
        return await asyncio.to_thread(self._path(sha256).read_bytes)

    async def exists(self, sha256: str) -> bool:
        return self._path(sha256).exists()

    async def delete(self, sha256: str) -> None:
        self._path(sha256).unlink(missing_ok=True)


class S3BlobStore:
    """boto3 is synchronous: every call runs in a worker thread."""

    def __init__(self, settings: S3Settings, client: Any = None) -> None:
        if not settings.bucket:
            raise ValueError("S3 blob store needs a bucket")
        self.bucket = settings.bucket
        self.prefix = settings.prefix
        self._client = client or _make_client(settings)

    def _key(self, sha256: str) -> str:
        return self.prefix + blob_key(sha256)

    async def _call(self, method: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return await asyncio.to_thread(getattr(self._client, method), **kwargs)
        except ClientError:
            raise
        except BotoCoreError as e:
            # endpoint down, credentials missing...: the message names no secret
            raise StorageUnavailable(f"S3 {method} failed: {type(e).__name__}") from e

    async def put(self, sha256: str, data: bytes) -> str:
        if not await self.exists(sha256):
            await self.put_key(self._key(sha256), data)
        return self._key(sha256)

    async def get(self, sha256: str) -> bytes:
        return await self.get_key(self._key(sha256))

    async def exists(self, sha256: str) -> bool:
        return await self.exists_key(self._key(sha256))

    async def delete(self, sha256: str) -> None:
        await self.delete_key(self._key(sha256))

    # objects by key, for what is kept beside the blobs (the operator's build contexts)

    async def put_key(self, key: str, data: bytes) -> None:
        await self._call("put_object", Bucket=self.bucket, Key=key, Body=data)

    async def get_key(self, key: str) -> bytes:
        response = await self._call("get_object", Bucket=self.bucket, Key=key)
        body: bytes = await asyncio.to_thread(response["Body"].read)
        return body

    async def exists_key(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            await self._call("head_object", Bucket=self.bucket, Key=key)
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise StorageUnavailable(f"S3 head_object failed: {e.response['Error']}") from e
        return True

    async def delete_key(self, key: str) -> None:
        await self._call("delete_object", Bucket=self.bucket, Key=key)


def _make_client(settings: S3Settings) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        aws_access_key_id=(
            settings.access_key_id.get_secret_value() if settings.access_key_id else None
        ),
        aws_secret_access_key=(
            settings.secret_access_key.get_secret_value() if settings.secret_access_key else None
        ),
        config=Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 3}),
    )


def make_blob_store(settings: S3Settings, data_dir: Path) -> BlobStore:
    if settings.bucket:
        return S3BlobStore(settings)
    return LocalBlobStore(data_dir / "blobs")

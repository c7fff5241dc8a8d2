"""Where state is kept: PostgreSQL, the code blobs (a directory or S3) and the keys that
encrypt tenant secrets at rest.
"""

from __future__ import annotations

from pydantic import BaseModel, SecretStr


class DatabaseSettings(BaseModel):
    """PostgreSQL. Without ``url`` an embedded server (pgserver) runs in ``data_dir/pg``."""

    url: SecretStr | None = None
    pool_min: int = 1
    pool_max: int = 10


class S3Settings(BaseModel):
    """Code blobs go to S3 when ``bucket`` is set, else to ``data_dir/blobs``."""

    bucket: str | None = None
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    prefix: str = "code/"


class SecretsSettings(BaseModel):
    """``SLESS_SECRETS_KEYS``: ``id:base64key[,id:base64key...]``, the AES-256-GCM keys that
    encrypt tenant secrets at rest; the first encrypts, all decrypt (sless/store/crypto.py).
    Unset in development: a key is generated in the data dir; unset in production: refused.
    """

    keys: SecretStr | None = None

"""Encryption at rest of tenant secrets: AES-256-GCM with named keys, rotation by key id.

The provider configures ``SLESS_SECRETS_KEYS`` as ``id:base64key[,id:base64key...]``
(32-byte keys, standard or URL-safe base64). The **first** key is the primary: it
encrypts every value written. Every key listed decrypts, so rotating is: put a new key
first, keep the old ones after it, restart; ``SecretRepository.reencrypt`` (run at every
gateway start) rewrites each value still under another key with the primary one; once it
reports nothing left under an old key, that key can be dropped from the list.

Each stored value is ``nonce (12 bytes) || ciphertext+tag`` with its key id beside it.
The associated data binds a value to its ``namespace/name``: a row copied onto another
secret's row does not decrypt.

In development, when no key is configured, one is generated once into
``<data dir>/secrets.key`` (mode 0600) and the start logs that it did so (the path, never
the key). In production a missing key stops the start: a generated key lying next to the
database would protect nothing.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from pydantic import SecretStr

from sless.config import Settings

log = logging.getLogger(__name__)

_NONCE_BYTES = 12
#: bytes a sealed value has beyond its plaintext: the nonce and the GCM tag
SEAL_OVERHEAD = _NONCE_BYTES + 16
_KEY_BYTES = 32
_KEY_ID = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
KEY_FILE_NAME = "secrets.key"
KEYS_FORMAT_HINT = (
    "SLESS_SECRETS_KEYS must be id:base64key[,id:base64key...] with 32-byte keys, the"
    ' first one encrypting; make one with: python3 -c "import base64, os;'
    " print('k1:' + base64.b64encode(os.urandom(32)).decode())\""
)


class SecretKeyError(Exception):
    """The configured keys are malformed or missing (never carries a key)."""


class UndecryptableSecret(Exception):
    """A stored value does not decrypt with any configured key (never carries a value)."""


@dataclass(frozen=True)
class SecretCipher:
    """Named AES-GCM keys; ``primary`` encrypts, all of them decrypt."""

    primary: str
    _keys: dict[str, AESGCM] = field(repr=False)

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def encrypt(self, associated: str, value: SecretStr) -> tuple[str, bytes]:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._keys[self.primary].encrypt(
            nonce, value.get_secret_value().encode(), associated.encode()
        )
        return self.primary, nonce + sealed

    def decrypt(self, associated: str, key_id: str, blob: bytes) -> SecretStr:
        key = self._keys.get(key_id)
        if key is None:
            raise UndecryptableSecret(f"encrypted under key {key_id!r}, which is not configured")
        try:
            plain = key.decrypt(blob[:_NONCE_BYTES], blob[_NONCE_BYTES:], associated.encode())
        except InvalidTag:
            raise UndecryptableSecret(f"does not decrypt with key {key_id!r}") from None
        return SecretStr(plain.decode())


def parse_keys(text: str) -> SecretCipher:
    """``id:base64key,...`` → a cipher whose primary is the first key."""
    keys: dict[str, AESGCM] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key_id, sep, encoded = item.partition(":")
        if not sep or not _KEY_ID.match(key_id) or key_id in keys:
            raise SecretKeyError(KEYS_FORMAT_HINT)
        try:
            raw = base64.b64decode(encoded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            raise SecretKeyError(KEYS_FORMAT_HINT) from None
        if len(raw) != _KEY_BYTES:
            raise SecretKeyError(KEYS_FORMAT_HINT)
        keys[key_id] = AESGCM(raw)
    if not keys:
        raise SecretKeyError(KEYS_FORMAT_HINT)
    return SecretCipher(primary=next(iter(keys)), _keys=keys)


def cipher_for(settings: Settings) -> SecretCipher:
    """The cipher of a process's settings (``SLESS_SECRETS_KEYS``, or the development key).

    Kubernetes mode needs the configured keys in development too: its gateway replicas and
    ``sless events`` share one database but no data directory, so a generated key would
    differ between them."""
    if settings.backend == "kubernetes" and settings.secrets.keys is None:
        raise SecretKeyError(
            "SLESS_SECRETS_KEYS is not set: in Kubernetes mode every gateway replica and"
            " sless events must share the key of the tenant secrets. " + KEYS_FORMAT_HINT
        )
    return load_cipher(
        settings.secrets.keys, settings.data_dir, production=settings.environment == "production"
    )


def load_cipher(configured: SecretStr | None, data_dir: Path, *, production: bool) -> SecretCipher:
    """The configured keys; in development a generated key kept in the data dir (0600)."""
    if configured is not None and configured.get_secret_value().strip():
        return parse_keys(configured.get_secret_value())
    if production:
        raise SecretKeyError(
            "SLESS_SECRETS_KEYS is not set: production needs a key to encrypt tenant secrets"
            " at rest. " + KEYS_FORMAT_HINT
        )
    path = data_dir / KEY_FILE_NAME
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        line = "dev:" + base64.b64encode(secrets.token_bytes(_KEY_BYTES)).decode() + "\n"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process of this data dir made it first: use that one
        else:
            with os.fdopen(fd, "w") as out:
                out.write(line)
            log.warning(
                "SLESS_SECRETS_KEYS is not set: generated a development key for tenant secrets"
                " in %s (set SLESS_SECRETS_KEYS in production)",
                path,
            )
    return parse_keys(path.read_text(encoding="utf-8"))

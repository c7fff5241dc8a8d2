"""Canary secrets for a detonation: plausible fake credentials, fresh for every run.

A detonation gives the function canary values for the usual cloud, database and API
credentials, for the secrets its spec declares, and for the credential files a stealer
looks for. Each value holds a random token of its own, so a canary found in what the sink
received (raw, base64, hex or URL-encoded, in any part of a request, a DNS name included)
proves the code sent it, and names which secret it sent. No canary is ever a real secret.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import secrets
import string
import urllib.parse
from dataclasses import dataclass, field

#: environment variables a stealer reaches for, besides the function's declared secrets
_ENV_CANARIES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "DATABASE_URL",
    "STRIPE_API_KEY",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "SLACK_BOT_TOKEN",
    "API_TOKEN",
    "WALLET_SEED",
)
#: credential files under $HOME
CREDENTIAL_FILES = (
    ".aws/credentials",
    ".npmrc",
    ".ssh/id_rsa",
    ".pypirc",
    ".docker/config.json",
    ".config/gcloud/application_default_credentials.json",
    ".kube/config",
    ".git-credentials",
)
#: plain settings that make "is this production?" checks answer yes
PRODUCTION_ENV = {"ENV": "production", "NODE_ENV": "production", "STAGE": "prod"}


def _token(length: int = 24) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _value(name: str, token: str) -> str:
    if name == "AWS_ACCESS_KEY_ID":
        return "AKIA" + token[:16].upper()
    if name == "DATABASE_URL":
        return f"postgres://app:{token}@db.internal:5432/app"
    if name == "WALLET_SEED":
        return "abandon ability able about above absent absorb abstract " + token
    return token


@dataclass(frozen=True)
class Canaries:
    #: environment name (or file) -> the canary value planted there
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    #: the random part of each canary -> where it was planted
    tokens: dict[str, str] = field(default_factory=dict)

    def found_in(self, data: bytes) -> list[str]:
        """Where each canary found in ``data`` was planted (``env:NAME`` or ``file:PATH``)."""
        haystacks = [data.lower()]
        for decode in (_unbase64, _unhex):
            haystacks.extend(decode(data))
        unquoted = urllib.parse.unquote_to_bytes(data)
        haystacks.append(unquoted.lower())
        found = []
        for token, origin in self.tokens.items():
            needles = {token.lower().encode(), token[:16].lower().encode()}
            needles.add(binascii.hexlify(token.encode()))
            if any(n in h for n in needles for h in haystacks):
                found.append(origin)
        return sorted(found)


def _unbase64(data: bytes) -> list[bytes]:
    out = []
    for word in data.replace(b"=", b" ").replace(b'"', b" ").replace(b":", b" ").split():
        if len(word) < 16:
            continue
        for decoder in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                out.append(decoder(word + b"=" * (-len(word) % 4)).lower())
            except (ValueError, binascii.Error):
                continue
    return out


def _unhex(data: bytes) -> list[bytes]:
    # DNS labels and the like: runs of hex, possibly split into labels by dots
    out = []
    for run in re.findall(rb"[0-9a-fA-F.]{16,}", data):
        joined = run.replace(b".", b"")
        for start in (0, 1):
            word = joined[start:]
            with contextlib.suppress(ValueError, binascii.Error):
                out.append(binascii.unhexlify(word[: len(word) // 2 * 2]).lower())
    return out


def make_canaries(declared_secrets: tuple[str, ...] = ()) -> Canaries:
    """Fresh canaries: the usual credentials, ``declared_secrets``, and credential files."""
    env: dict[str, str] = {}
    files: dict[str, str] = {}
    tokens: dict[str, str] = {}
    for name in (*_ENV_CANARIES, *declared_secrets):
        token = _token()
        env[name] = _value(name, token)
        tokens[token] = f"env:{name}"
    for path in CREDENTIAL_FILES:
        token = _token()
        tokens[token] = f"file:~/{path}"
        files[path] = _file_content(path, token)
    return Canaries(env=env, files=files, tokens=tokens)


def _file_content(path: str, token: str) -> str:
    if path == ".aws/credentials":
        key_id = "AKIA" + token[:16].upper()
        return f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {token}\n"
    if path == ".npmrc":
        return f"//registry.npmjs.org/:_authToken=npm_{token}\n"
    if path == ".ssh/id_rsa":
        return f"-----BEGIN OPENSSH PRIVATE KEY-----\n{token}\n-----END OPENSSH PRIVATE KEY-----\n"
    return f'{{"token": "{token}"}}\n'

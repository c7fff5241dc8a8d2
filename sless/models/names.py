"""Names and their rules: DNS-1123 labels (functions, tenants and their namespaces),
version names (``v3``) and the environment names a function may set.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

#: DNS-1123 label: what Kubernetes accepts as a namespace or object name
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 63
#: a tenant name becomes part of the namespace ``sless-<tenant>``
MAX_TENANT_NAME_LENGTH = MAX_NAME_LENGTH - len("sless-")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: environment names a function may not set: they steer the runtime or the sandbox
_RESERVED_ENV_PREFIXES = ("SLESS_", "LD_", "PYTHON", "NODE_")


def is_dns1123_label(value: str, max_length: int = MAX_NAME_LENGTH) -> bool:
    return len(value) <= max_length and bool(_DNS1123_LABEL.match(value))


def check_name(value: str) -> str:
    if not is_dns1123_label(value):
        raise ValueError(
            "must be a DNS-1123 label: at most 63 lowercase letters, digits and '-', "
            "starting and ending with a letter or digit"
        )
    return value


def check_tenant_name(value: str) -> str:
    if not is_dns1123_label(value, MAX_TENANT_NAME_LENGTH):
        raise ValueError(f"must be a DNS-1123 label of at most {MAX_TENANT_NAME_LENGTH} characters")
    return value


Name = Annotated[str, AfterValidator(check_name)]
TenantName = Annotated[str, AfterValidator(check_tenant_name)]


_NAMESPACE_PREFIX = "sless-"


def namespace_for(tenant: str) -> str:
    return f"{_NAMESPACE_PREFIX}{tenant}"


def tenant_of(namespace: str) -> str:
    """The inverse of ``namespace_for``; raises ``ValueError`` for a namespace it did not make."""
    if not namespace.startswith(_NAMESPACE_PREFIX) or len(namespace) == len(_NAMESPACE_PREFIX):
        raise ValueError(f"{namespace[:80]!r} is not a tenant namespace")
    return namespace[len(_NAMESPACE_PREFIX) :]


#: a version's name: ``v`` and its number (``v1``, ``v2``, ...), given in upload order
_VERSION_NAME = re.compile(r"^v[1-9][0-9]{0,8}$")


def check_version_name(value: str) -> str:
    if not _VERSION_NAME.match(value):
        raise ValueError(f"{value[:20]!r} is not a version name such as v3")
    return value


def is_version_name(value: str) -> bool:
    return bool(_VERSION_NAME.match(value))


def version_number(version: str) -> int:
    """``v12`` → 12 (``version`` checked by ``check_version_name``)."""
    return int(check_version_name(version)[1:])


VersionName = Annotated[str, AfterValidator(check_version_name)]


def check_env_name(value: str) -> str:
    """A name a function may set in its environment (not one the runtime or sandbox owns)."""
    if not _ENV_NAME.match(value):
        raise ValueError(f"invalid environment variable name {value[:64]!r}")
    if value.upper().startswith(_RESERVED_ENV_PREFIXES):
        raise ValueError(f"environment variable {value!r} is reserved")
    return value

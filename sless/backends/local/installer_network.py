"""The network an embedded build's installer gets: the package index and the registry the
provider configured, and nothing else.

The manifest allowlist (``sless.policies.manifests``) decides what a tenant may ask for,
but not what a published package asks for in turn: npm follows a registry package's own
``git+``/tarball dependency wherever its publisher points it, from the host, and a build
error quotes what came back. So the installer runs in a network namespace of its own
(``unshare --net``), where ``installer_netns.py`` forwards ``127.0.0.1:3128`` to an
allowlisting proxy of the gateway's (``sless.sandbox.egress.EgressProxy``, the same one
that carries functions' egress) and there is no other route and no resolver. The proxy
lets through only the destinations below: the npm registry
(``SLESS_VALIDATION_NPM_REGISTRY``) and the Python indexes the installer is given
(``UV_INDEX_URL``, ``UV_DEFAULT_INDEX``, ``UV_EXTRA_INDEX_URL``, ``UV_INDEX``; PyPI and its
file host when none replaces the default).

The proxy connects directly: an upstream proxy the gateway itself needs (its own
``HTTPS_PROXY``) is not chained.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from sless.sandbox.egress import EgressProxy

_LAUNCHER = Path(__file__).with_name("installer_netns.py")
_PROXY = "http://127.0.0.1:3128"
#: how the installers (uv, npm, and the git npm may run) are told to use the proxy
PROXY_ENV = {
    "HTTP_PROXY": _PROXY,
    "HTTPS_PROXY": _PROXY,
    "ALL_PROXY": _PROXY,
    "http_proxy": _PROXY,
    "https_proxy": _PROXY,
    "all_proxy": _PROXY,
    "npm_config_proxy": _PROXY,
    "npm_config_https_proxy": _PROXY,
    "npm_config_noproxy": "",
}
_PYPI = [("pypi.org", 443), ("files.pythonhosted.org", 443)]
_INDEX_ENV = ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX")
_sockets = itertools.count()


def registry_destinations(npm_registry: str) -> list[tuple[str, int]]:
    """``(host, port)`` npm may reach: the registry."""
    return _destinations([npm_registry])


def index_destinations(environ: Mapping[str, str]) -> list[tuple[str, int]]:
    """``(host, port)`` uv may reach: the indexes it is given, PyPI by default."""
    urls = []
    for key in _INDEX_ENV:
        for word in environ.get(key, "").split():
            name, equals, url = word.partition("=")
            # UV_INDEX entries may be ``name=url``
            urls.append(url if equals and "://" not in name else word)
    default = not (environ.get("UV_INDEX_URL") or environ.get("UV_DEFAULT_INDEX"))
    return _destinations(["https://pypi.org/simple"] * default + urls)


def _destinations(urls: list[str]) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue
        found.append((parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)))
        if parts.hostname == "pypi.org":
            found += _PYPI
    return list(dict.fromkeys(found))


@contextlib.asynccontextmanager
async def confined(directory: Path, allowed: list[tuple[str, int]]) -> AsyncIterator[list[str]]:
    """A proxy for one installer run, and the command prefix that runs a command, as root
    (it drops to the tenant itself, ``setpriv``), in a network namespace where that proxy
    is the only way out. Goes after ``unshare --net``."""
    path = directory / f"{os.getpid()}-{next(_sockets)}.sock"
    proxy = EgressProxy(path, [], name="build", provider=allowed)
    await proxy.start()
    try:
        yield [sys.executable, "-I", str(_LAUNCHER), str(path), "--"]
    finally:
        await proxy.close()

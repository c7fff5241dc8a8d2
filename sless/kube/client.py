"""A small asyncio client for the Kubernetes API: JSON requests and watch streams on aiohttp.

Why not the ``kubernetes`` package's generated client: it is synchronous. Wrapped in
``asyncio.to_thread`` it would hold one thread per long-running watch, and a watch blocked
in a socket read cannot be cancelled at shutdown. Requests and watches here are plain
aiohttp on the event loop (TLS, client certificates, streaming) and cancel cleanly.
The ``kubernetes`` package is still used for what it does
well and what we should not re-implement: reading a kubeconfig (exec plugins, embedded
certificates, contexts) or the in-cluster service account. That happens in ``open()``,
never at import time, in a thread because it reads files and may run a plugin.

Errors map onto the platform's family (``sless.errors``) in one place, ``_error_for``:
404 ``NotFound``, 409 ``Conflict`` (``AlreadyExists`` for a create race), 400/422
``Invalid``, 410 ``Gone`` (a watch's resourceVersion expired), and everything that will
pass, or that the tenant cannot fix (connection errors, 401/403, 429, 5xx),
``BackendUnavailable``. Messages are cut short and never carry the token or the server URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from sless.config import KubernetesSettings
from sless.errors import BackendUnavailable, Conflict, Invalid, NotFound, SlessError

log = logging.getLogger(__name__)

#: re-read the credentials (a rotated service account token, an exec plugin) this often
_AUTH_REFRESH_S = 60.0
#: one watch event larger than this is refused (an object is at most ~1.5 MiB in etcd)
_MAX_EVENT_BYTES = 8 * 1024 * 1024
_MAX_MESSAGE = 300

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class AlreadyExists(Conflict):
    """A create found the object there already (a race with another writer)."""


class Forbidden(BackendUnavailable):
    """HTTP 401/403: the gateway's credentials or RBAC do not allow the request."""


class Gone(BackendUnavailable):
    """HTTP 410: the resourceVersion a watch started from is no longer in the cache."""


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "..."


def _error_for(status: int, body: bytes) -> SlessError:
    reason = ""
    message = ""
    with contextlib.suppress(ValueError, AttributeError):
        data = json.loads(body)
        reason = str(data.get("reason") or "")
        message = str(data.get("message") or "")
    message = _short(message or f"HTTP {status}")
    if status == 404:
        return NotFound(message)
    if status == 409:
        return AlreadyExists(message) if reason == "AlreadyExists" else Conflict(message)
    if status == 410:
        return Gone(message)
    if status in (400, 422):
        return Invalid(message)
    if status in (401, 403):
        # not the tenant's fault: the gateway's credentials or RBAC are wrong
        return Forbidden(f"the Kubernetes API refused the gateway (HTTP {status})")
    return BackendUnavailable(f"the Kubernetes API answered HTTP {status}: {message}")


@dataclass(frozen=True)
class _Connection:
    server: str
    ssl: ssl.SSLContext | bool


def _load_configuration(settings: KubernetesSettings) -> Any:
    """A ``kubernetes.client.Configuration`` from settings (blocking: run in a thread)."""
    import kubernetes

    # the package is only partly typed: treat it as Any at this one edge
    client: Any = kubernetes.client
    config: Any = kubernetes.config
    configuration = client.Configuration()
    if settings.kubeconfig is not None:
        config.load_kube_config(
            config_file=str(settings.kubeconfig),
            client_configuration=configuration,
            persist_config=False,
        )
        return configuration
    try:
        config.load_incluster_config(client_configuration=configuration)
    except config.ConfigException:
        config.load_kube_config(client_configuration=configuration, persist_config=False)
    return configuration


def _ssl_context(configuration: Any) -> ssl.SSLContext | bool:
    if not configuration.verify_ssl:
        log.warning("TLS verification of the Kubernetes API is off (kubeconfig says so)")
        return False
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


class KubeApi:
    """JSON requests and watches against one API server, with the gateway's credentials."""

    def __init__(self, settings: KubernetesSettings, *, request_timeout_s: float = 15.0) -> None:
        self._settings = settings
        self._request_timeout_s = request_timeout_s
        self._configuration: Any = None
        self._connection: _Connection | None = None
        self._session: aiohttp.ClientSession | None = None
        self._auth: dict[str, str] = {}
        self._auth_at = 0.0
        self._auth_lock = asyncio.Lock()

    async def open(self) -> None:
        try:
            configuration = await asyncio.to_thread(_load_configuration, self._settings)
            context = await asyncio.to_thread(_ssl_context, configuration)
        except Exception as e:
            # the kubeconfig's own error may quote its content: keep only the type
            raise BackendUnavailable(
                f"cannot load the Kubernetes configuration ({type(e).__name__})"
            ) from e
        self._configuration = configuration
        self._connection = _Connection(server=configuration.host.rstrip("/"), ssl=context)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=64, ssl=context),
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        await self._headers(force=True)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _headers(self, *, force: bool = False) -> dict[str, str]:
        if force or time.monotonic() - self._auth_at > _AUTH_REFRESH_S:
            async with self._auth_lock:
                if force or time.monotonic() - self._auth_at > _AUTH_REFRESH_S:
                    settings = await asyncio.to_thread(self._configuration.auth_settings)
                    self._auth = {
                        entry["key"]: entry["value"]
                        for entry in settings.values()
                        if entry.get("in") == "header" and entry.get("value")
                    }
                    self._auth_at = time.monotonic()
        return {"Accept": JSON, **self._auth}

    def _url(self, path: str) -> tuple[aiohttp.ClientSession, str]:
        if self._session is None or self._connection is None:
            raise BackendUnavailable("the Kubernetes client is not open")
        return self._session, self._connection.server + path

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str = JSON,
    ) -> dict[str, Any]:
        """One JSON request; the decoded answer, or an error of the platform's family."""
        raw = await self._send(method, path, params=params, body=body, content_type=content_type)
        try:
            data = json.loads(raw)
        except ValueError as e:
            raise BackendUnavailable("the Kubernetes API answered with invalid JSON") from e
        if not isinstance(data, dict):
            raise BackendUnavailable("the Kubernetes API answered with unexpected JSON")
        return data

    async def request_text(
        self, method: str, path: str, *, params: Mapping[str, str] | None = None
    ) -> str:
        """A request whose answer is text (pod logs)."""
        raw = await self._send(method, path, params=params, body=None, content_type=JSON)
        return raw.decode("utf-8", "replace")

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None,
        body: Any,
        content_type: str,
    ) -> bytes:
        session, url = self._url(path)
        headers = await self._headers()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        try:
            async with session.request(
                method,
                url,
                params=params,
                data=data,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self._request_timeout_s),
                allow_redirects=False,
            ) as response:
                raw = await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as e:
            raise BackendUnavailable(
                f"the Kubernetes API is unreachable ({type(e).__name__})"
            ) from e
        if status == 401:
            self._auth_at = 0.0  # a rotated token: re-read it before the next request
        if status >= 400:
            raise _error_for(status, raw)
        return raw

    async def watch(
        self, path: str, *, params: Mapping[str, str], timeout_s: float
    ) -> AsyncGenerator[dict[str, Any], None]:
        """The events of one watch request (``{"type", "object"}``), until the server ends it.

        ``timeout_s`` is sent as ``timeoutSeconds``; the client gives up a little later, so a
        server that vanished without closing the connection is noticed.
        """
        session, url = self._url(path)
        query = {**params, "watch": "1", "timeoutSeconds": str(int(timeout_s))}
        headers = await self._headers()
        timeout = aiohttp.ClientTimeout(total=timeout_s + 30, sock_connect=self._request_timeout_s)
        try:
            async with session.get(
                url, params=query, headers=headers, timeout=timeout, allow_redirects=False
            ) as response:
                if response.status >= 400:
                    if response.status == 401:
                        self._auth_at = 0.0
                    raise _error_for(response.status, await response.read())
                buffer = bytearray()
                async for chunk in response.content.iter_any():
                    buffer.extend(chunk)
                    while (end := buffer.find(b"\n")) >= 0:
                        line = bytes(buffer[:end])
                        del buffer[: end + 1]
                        if line.strip():
                            yield _decode_event(line)
                    if len(buffer) > _MAX_EVENT_BYTES:
                        raise BackendUnavailable(
                            "a watch event from the Kubernetes API is too large"
                        )
                if buffer.strip():
                    yield _decode_event(bytes(buffer))
        except (aiohttp.ClientError, TimeoutError) as e:
            raise BackendUnavailable(
                f"the watch on the Kubernetes API broke ({type(e).__name__})"
            ) from e


def _decode_event(line: bytes) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError as e:
        raise BackendUnavailable("the Kubernetes API sent an invalid watch event") from e
    if not isinstance(event, dict) or not isinstance(event.get("object"), dict):
        raise BackendUnavailable("the Kubernetes API sent an unexpected watch event")
    return event

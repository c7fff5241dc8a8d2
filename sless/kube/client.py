"""The one asyncio client for the Kubernetes API, shared by the gateway's Kubernetes backend
and the operator: JSON requests, object verbs and watch streams on aiohttp.

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
``BackendUnavailable`` (``Forbidden`` for 401/403). Messages are cut short and never carry
the token or the server URL. What the API server said (status, reason, message) stays on
the error for the operator, which reports it on the object (``answer_of``): an admission
refusal is a 403 whose message says which policy refused.

TLS verification turned off by a kubeconfig always logs a warning.
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
from urllib.parse import quote

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
APPLY_PATCH = "application/apply-patch+yaml"


class AlreadyExists(Conflict):
    """A create found the object there already (a race with another writer)."""


class Forbidden(BackendUnavailable):
    """HTTP 401/403: the gateway's credentials or RBAC do not allow the request."""


class Gone(BackendUnavailable):
    """HTTP 410: the resourceVersion a watch started from is no longer in the cache."""


@dataclass(frozen=True, slots=True)
class ApiAnswer:
    """What the API server answered to a failed request (message cut short)."""

    status: int
    reason: str
    message: str

    def __str__(self) -> str:
        return f"{self.status} {self.reason}: {self.message}".replace(" : ", ": ")


def answer_of(error: BaseException) -> ApiAnswer | None:
    """The API server's answer behind an error of this client (None for anything else)."""
    answer = getattr(error, "kube_answer", None)
    return answer if isinstance(answer, ApiAnswer) else None


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
    error: SlessError
    if status == 404:
        error = NotFound(message)
    elif status == 409:
        error = AlreadyExists(message) if reason == "AlreadyExists" else Conflict(message)
    elif status == 410:
        error = Gone(message)
    elif status in (400, 422):
        error = Invalid(message)
    elif status in (401, 403):
        # not the tenant's fault: the credentials or RBAC are wrong, or admission refused
        error = Forbidden(f"the Kubernetes API refused the request (HTTP {status})")
    else:
        error = BackendUnavailable(f"the Kubernetes API answered HTTP {status}: {message}")
    vars(error)["kube_answer"] = ApiAnswer(status, reason, message)  # read by answer_of
    return error


def _plural(kind: str) -> str:
    lower = kind.lower()
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


def collection_path(api_version: str, kind: str, namespace: str | None = None) -> str:
    """``/api/v1/namespaces/ns/pods`` and the like, for a kind's regular plural."""
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{quote(namespace, safe='')}"
    return f"{base}/{_plural(kind)}"


def object_path(api_version: str, kind: str, namespace: str | None, name: str) -> str:
    return f"{collection_path(api_version, kind, namespace)}/{quote(name, safe='')}"


def path_of(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return object_path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


@dataclass(frozen=True)
class _Connection:
    server: str
    ssl: ssl.SSLContext | bool


def load_configuration(settings: KubernetesSettings) -> Any:
    """A ``kubernetes.client.Configuration`` from the kubeconfig in settings, else the
    in-cluster service account, else ~/.kube/config (blocking: files, exec plugins)."""
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


def bearer_token(configuration: Any) -> str | None:
    """The bearer token of a ``Configuration`` (its refresh hook runs on every call)."""
    for auth in configuration.auth_settings().values():
        value = str(auth.get("value") or "")
        if auth.get("in") == "header" and auth.get("key", "").lower() == "authorization":
            # the in-cluster loader writes "bearer <token>": the scheme in any case
            scheme, _, token = value.strip().partition(" ")
            return (token if scheme.lower() == "bearer" else value).strip() or None
    return None


def _ssl_context(configuration: Any) -> ssl.SSLContext | bool:
    if not configuration.verify_ssl:
        log.warning("TLS verification of the Kubernetes API is off (kubeconfig says so)")
        return False
    context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
    if configuration.cert_file:
        context.load_cert_chain(configuration.cert_file, configuration.key_file)
    return context


class KubeApi:
    """Requests, object verbs and watches against one API server; ``open()`` first, inside
    the running event loop. ``configuration`` skips loading one (the operator has it)."""

    def __init__(
        self,
        settings: KubernetesSettings,
        *,
        request_timeout_s: float = 15.0,
        field_manager: str = "sless",
        configuration: Any = None,
    ) -> None:
        self._settings = settings
        self._request_timeout_s = request_timeout_s
        self._field_manager = field_manager
        self._configuration: Any = configuration
        self._connection: _Connection | None = None
        self._session: aiohttp.ClientSession | None = None
        self._auth: dict[str, str] = {}
        self._auth_at = 0.0
        self._auth_lock = asyncio.Lock()

    async def open(self) -> None:
        try:
            configuration = self._configuration or await asyncio.to_thread(
                load_configuration, self._settings
            )
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

    @property
    def server(self) -> str:
        if self._connection is None:
            raise BackendUnavailable("the Kubernetes client is not open")
        return self._connection.server

    # -- object verbs on plain dicts (what sless.policies renders) ------------------------

    async def get(self, path: str) -> dict[str, Any] | None:
        """The object, or None when there is none."""
        try:
            return await self.request("GET", path)
        except NotFound:
            return None

    async def list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        params = {"labelSelector": label_selector} if label_selector else None
        items: list[dict[str, Any]] = (await self.request("GET", path, params=params)).get(
            "items"
        ) or []
        return items

    async def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any] | None:
        """Create; None when it already exists (409): callers use deterministic names."""
        meta = obj["metadata"]
        path = collection_path(obj["apiVersion"], obj["kind"], meta.get("namespace"))
        params = {"dryRun": "All"} if dry_run else None
        try:
            return await self.request("POST", path, body=obj, params=params)
        except Conflict:
            return None

    async def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply as this client's field manager, taking over conflicting
        fields: what the policies render is what the cluster holds, and fields dropped
        from a rendering are removed."""
        return await self.request(
            "PATCH",
            path_of(obj),
            body=obj,
            params={"fieldManager": self._field_manager, "force": "true"},
            content_type=APPLY_PATCH,
        )

    async def merge_patch(self, path: str, patch: dict[str, Any]) -> dict[str, Any] | None:
        """Merge-patch; None when the object is gone."""
        try:
            return await self.request("PATCH", path, body=patch, content_type=MERGE_PATCH)
        except NotFound:
            return None

    async def delete(self, path: str) -> bool:
        """Delete in the background (dependents too); False when it was already gone."""
        try:
            await self.request("DELETE", path, body={"propagationPolicy": "Background"})
        except NotFound:
            return False
        return True

    async def delete_collection(self, path: str, label_selector: str) -> None:
        for item in await self.list(path, label_selector):
            await self.delete(f"{path}/{quote(item['metadata']['name'], safe='')}")

    async def read_log(self, namespace: str, pod: str, container: str, tail_lines: int) -> str:
        path = object_path("v1", "Pod", namespace, pod) + "/log"
        params = {"container": container, "tailLines": str(tail_lines)}
        return await self.request_text("GET", path, params=params)

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

"""A small async client for the Kubernetes API (aiohttp), used by the handlers.

Why not the ``kubernetes`` package's generated client: it is synchronous (every call would
need a thread) and typed per kind, while the operator only needs get / list / create /
server-side apply / merge-patch / delete on plain dicts rendered by ``sless.policies``. The
``kubernetes`` package is still used for what it is good at: reading a kubeconfig or the
in-cluster service account into a ``Configuration`` (``load_configuration``), whose token is
refreshed through its hook on every request.

Errors: ``ApiError`` carries the HTTP status and the API server's reason; the body is cut
short and no header is ever included.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import aiohttp

from sless.config import KubernetesSettings

FIELD_MANAGER = "sless-operator"
_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)


class ApiError(Exception):
    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message[:300]}")
        self.status = status
        self.reason = reason
        self.message = message[:300]


def load_configuration(settings: KubernetesSettings) -> Any:
    """A ``kubernetes.client.Configuration`` from the kubeconfig in settings, else the
    in-cluster service account, else ~/.kube/config. Nothing global is touched."""
    from kubernetes import client, config

    cfg = client.Configuration()
    if settings.kubeconfig is not None:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(settings.kubeconfig), client_configuration=cfg, persist_config=False
        )
        return cfg
    try:
        config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
    except config.ConfigException:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            client_configuration=cfg, persist_config=False
        )
    return cfg


def bearer_token(configuration: Any) -> str | None:
    """The bearer token of a ``Configuration`` (its refresh hook runs on every call)."""
    for auth in configuration.auth_settings().values():
        value = str(auth.get("value") or "")
        if auth.get("in") == "header" and auth.get("key", "").lower() == "authorization":
            return value.removeprefix("Bearer ").strip() or None
    return None


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def collection_path(api_version: str, kind: str, namespace: str | None = None) -> str:
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespace:
        base += f"/namespaces/{namespace}"
    return f"{base}/{_plural(kind)}"


def object_path(api_version: str, kind: str, namespace: str | None, name: str) -> str:
    return f"{collection_path(api_version, kind, namespace)}/{name}"


def path_of(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return object_path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


class KubeApi:
    """One aiohttp session to one API server. Create it inside the running event loop."""

    def __init__(self, configuration: Any) -> None:
        self._cfg = configuration
        self._server = str(configuration.host).rstrip("/")
        context = ssl.create_default_context(cafile=configuration.ssl_ca_cert or None)
        if configuration.cert_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file)
        if not configuration.verify_ssl:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        self._session = aiohttp.ClientSession(
            timeout=_TIMEOUT, connector=aiohttp.TCPConnector(ssl=context)
        )

    @property
    def server(self) -> str:
        return self._server

    def bearer(self) -> str | None:
        """The current token (refreshed by the configuration's hook), without the prefix."""
        return bearer_token(self._cfg)

    async def close(self) -> None:
        await self._session.close()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        headers = {"Accept": "application/json"}
        token = self.bearer()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body)
        async with self._session.request(
            method, self._server + path, data=data, params=params, headers=headers
        ) as response:
            text = await response.text()
            if response.status >= 400:
                reason, message = response.reason or "", text
                try:
                    status = json.loads(text)
                    reason, message = status.get("reason", reason), status.get("message", text)
                except ValueError:
                    pass
                raise ApiError(response.status, str(reason), str(message))
            return json.loads(text) if text else None

    async def get(self, path: str) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = await self.request("GET", path)
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        return result

    async def list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        params = {"labelSelector": label_selector} if label_selector else None
        result = await self.request("GET", path, params=params)
        items: list[dict[str, Any]] = result.get("items") or []
        return items

    async def create(self, obj: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any] | None:
        """Create; None when it already exists (409): callers use deterministic names."""
        meta = obj["metadata"]
        path = collection_path(obj["apiVersion"], obj["kind"], meta.get("namespace"))
        params = {"dryRun": "All"} if dry_run else None
        try:
            result: dict[str, Any] = await self.request("POST", path, body=obj, params=params)
        except ApiError as e:
            if e.status == 409:
                return None
            raise
        return result

    async def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply as ``sless-operator``, taking over conflicting fields: what
        the policies render is what the cluster holds, and fields dropped from a rendering
        are removed."""
        result: dict[str, Any] = await self.request(
            "PATCH",
            path_of(obj),
            body=obj,
            params={"fieldManager": FIELD_MANAGER, "force": "true"},
            content_type="application/apply-patch+yaml",
        )
        return result

    async def merge_patch(self, path: str, patch: dict[str, Any]) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = await self.request(
                "PATCH", path, body=patch, content_type="application/merge-patch+json"
            )
        except ApiError as e:
            if e.status == 404:
                return None
            raise
        return result

    async def delete(self, path: str) -> bool:
        """Delete in the background (dependents too); False when it was already gone."""
        try:
            await self.request("DELETE", path, body={"propagationPolicy": "Background"})
        except ApiError as e:
            if e.status == 404:
                return False
            raise
        return True

    async def delete_collection(self, path: str, label_selector: str) -> None:
        for item in await self.list(path, label_selector):
            await self.delete(f"{path}/{item['metadata']['name']}")

    async def read_log(self, namespace: str, pod: str, container: str, tail_lines: int) -> str:
        path = object_path("v1", "Pod", namespace, pod) + "/log"
        headers = {"Accept": "text/plain"}
        token = self.bearer()
        if token:
            headers["Authorization"] = f"Bearer {token}"
        params = {"container": container, "tailLines": str(tail_lines)}
        async with self._session.get(
            self._server + path, params=params, headers=headers
        ) as response:
            text = await response.text()
            if response.status >= 400:
                raise ApiError(response.status, response.reason or "", text)
            return text

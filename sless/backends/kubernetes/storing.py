"""Create-or-replace, get, list and delete of one namespaced custom resource kind.

Used for Triggers and FunctionJobs, whose specs the gateway owns whole. A replace carries
the resourceVersion it read, so a concurrent writer makes it fail with 409; it is then
read and tried again a few times before the caller gets ``Conflict``. A check of the
current object (a FunctionJob's ``run_id`` may only grow) runs on every attempt, against
what that attempt read, so it cannot be raced past. An object being deleted (a finalizer
still runs) is gone for the API, and writing it is a ``Conflict``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import Any

from sless.backends.kubernetes.resources import is_terminating
from sless.errors import BackendUnavailable, Conflict, NotFound
from sless.kube import KubeApi
from sless.models import is_dns1123_label

_ATTEMPTS = 5

Check = Callable[[dict[str, Any]], None]


class ResourceStore:
    def __init__(self, api: KubeApi, *, root: str, plural: str, kind: str, noun: str) -> None:
        self._api = api
        self._root = root
        self._plural = plural
        self._kind = kind
        self._api_version = root.removeprefix("/apis/")
        self.noun = noun

    def path(self, namespace: str, name: str | None = None) -> str:
        if not is_dns1123_label(namespace) or (name is not None and not is_dns1123_label(name)):
            raise NotFound(f"{self.noun} not found")
        path = f"{self._root}/namespaces/{namespace}/{self._plural}"
        return path if name is None else f"{path}/{name}"

    async def get(self, namespace: str, name: str) -> dict[str, Any]:
        try:
            body = await self._api.request("GET", self.path(namespace, name))
        except NotFound:
            raise NotFound(f"{self.noun} {name!r} not found") from None
        if is_terminating(body):
            raise NotFound(f"{self.noun} {name!r} not found")
        return body

    async def list(self, namespace: str) -> list[dict[str, Any]]:
        try:
            answer = await self._api.request("GET", self.path(namespace))
        except NotFound:
            return []
        items = [i for i in answer.get("items") or [] if not is_terminating(i)]
        return sorted(items, key=lambda i: str(i["metadata"]["name"]))

    async def put(
        self, namespace: str, name: str, spec: dict[str, Any], *, check: Check | None = None
    ) -> tuple[dict[str, Any], bool]:
        """Create or replace the spec; the object and whether it was created."""
        path = self.path(namespace, name)
        for attempt in range(_ATTEMPTS):
            if attempt:
                await asyncio.sleep(0.05 * attempt * random.uniform(0.5, 1.5))  # noqa: S311
            try:
                current = await self._api.request("GET", path)
            except NotFound:
                body = {
                    "apiVersion": self._api_version,
                    "kind": self._kind,
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": spec,
                }
                try:
                    return await self._api.request("POST", self.path(namespace), body=body), True
                except NotFound:
                    raise BackendUnavailable(
                        f"namespace {namespace!r} does not exist in the cluster yet"
                    ) from None
                except Conflict:
                    continue  # created meanwhile: replace it
            if is_terminating(current):
                raise Conflict(f"{self.noun} {name!r} is being deleted; try again shortly")
            if check is not None:
                check(current)
            current["spec"] = spec
            try:
                return await self._api.request("PUT", path, body=current), False
            except Conflict:
                continue  # a stale resourceVersion: read again
        raise Conflict(f"{self.noun} {name!r} is being changed concurrently; try again")

    async def delete(self, namespace: str, name: str) -> None:
        await self.get(namespace, name)
        try:
            await self._api.request("DELETE", self.path(namespace, name))
        except NotFound:
            raise NotFound(f"{self.noun} {name!r} not found") from None

    async def delete_all(self, namespace: str) -> None:
        """One by one: the gateway's RBAC grants delete, not deletecollection."""
        for item in await self.list(namespace):
            with contextlib.suppress(NotFound):
                await self._api.request("DELETE", self.path(namespace, item["metadata"]["name"]))

"""List-then-watch: keep an in-memory view of one kind of object current.

The loop is the one client-go's reflector runs: list (which gives a resourceVersion),
hand the whole list to ``on_reset``, then watch from that resourceVersion and hand each
event to ``on_event``. Bookmarks move the resourceVersion on without an object. A watch
that the server ends (``timeoutSeconds``) resumes from the last resourceVersion; a
resourceVersion too old to resume from (HTTP 410, or an ERROR event with code 410) starts
over with a fresh list; any other failure retries with capped, jittered exponential
backoff. The view is therefore eventually exact, and a missed event can only delay it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from sless.errors import SlessError
from sless.kube import Gone, KubeApi

log = logging.getLogger(__name__)

OnReset = Callable[[list[dict[str, Any]]], None]
OnEvent = Callable[[str, dict[str, Any]], None]


class Watcher:
    def __init__(
        self,
        api: KubeApi,
        path: str,
        *,
        on_reset: OnReset,
        on_event: OnEvent,
        params: Mapping[str, str] | None = None,
        watch_timeout_s: float = 120.0,
        backoff_initial_s: float = 0.2,
        backoff_max_s: float = 15.0,
    ) -> None:
        self.path = path
        self._api = api
        self._on_reset = on_reset
        self._on_event = on_event
        self._params = dict(params or {})
        self._watch_timeout_s = watch_timeout_s
        self._backoff_initial_s = backoff_initial_s
        self._backoff_max_s = backoff_max_s
        #: set once the first list has been handed over
        self.synced = asyncio.Event()
        #: the last failure, for a clear message when the first sync does not come
        self.last_error: str | None = None
        self.resource_version: str | None = None

    async def run(self) -> None:
        backoff = self._backoff_initial_s
        while True:
            try:
                if self.resource_version is None:
                    await self._list()
                await self._watch()
                backoff = self._backoff_initial_s
            except Gone:
                log.info("watch on %s expired; listing again", self.path)
                self.resource_version = None
            except Exception as e:
                # SlessError: the API's errors (unreachable, refused, 404 while the CRD is not
                # installed); anything else is a malformed answer or a bug in a callback, and
                # the view must keep converging regardless
                if isinstance(e, SlessError):
                    self.last_error = e.message
                    log.warning("watch on %s failed, retry in %.1fs: %s", self.path, backoff, e)
                else:
                    self.last_error = type(e).__name__
                    log.exception("watch on %s failed, retry in %.1fs", self.path, backoff)
                await asyncio.sleep(backoff * random.uniform(0.5, 1.0))  # noqa: S311
                backoff = min(backoff * 2, self._backoff_max_s)

    async def _list(self) -> None:
        answer = await self._api.request("GET", self.path, params=self._params)
        items = answer.get("items") or []
        self._on_reset([item for item in items if isinstance(item, dict)])
        self.resource_version = str(answer["metadata"]["resourceVersion"])
        self.last_error = None
        self.synced.set()

    async def _watch(self) -> None:
        params = {
            **self._params,
            "resourceVersion": self.resource_version or "",
            "allowWatchBookmarks": "true",
        }
        # spread the reconnects of many gateway replicas
        timeout = self._watch_timeout_s * random.uniform(0.8, 1.0)  # noqa: S311
        events = self._api.watch(self.path, params=params, timeout_s=timeout)
        async with contextlib.aclosing(events):
            async for event in events:
                kind = event.get("type")
                obj: dict[str, Any] = event["object"]
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone(str(obj.get("message") or "expired"))
                    raise ValueError(f"watch error: {str(obj.get('message'))[:200]}")
                version = (obj.get("metadata") or {}).get("resourceVersion")
                if kind != "BOOKMARK":
                    self._on_event(str(kind), obj)
                if version:
                    self.resource_version = str(version)

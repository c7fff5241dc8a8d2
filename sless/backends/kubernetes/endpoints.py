"""Where a function's instances listen, and one keep-alive HTTP client per instance.

``SliceIndex`` folds EndpointSlices (fed by a watch) into the set of ready addresses of
each Service: an endpoint counts when ``conditions.ready`` is not false (the API says an
unset condition means ready) and it is not terminating; the port is the one named
``http``, else the slice's first port.

``EndpointPool`` holds the endpoints of one function. Each endpoint has its own
``Http1Client``, so keep-alive connections are pooled per instance (at most the
function's ``concurrency`` kept idle: more in flight would only queue inside the
instance). An invocation goes to the endpoint with the fewest in flight, ties broken
round-robin. An endpoint whose connection failed is skipped for ``cooldown_s`` unless no
other is left. An endpoint that leaves the slices keeps its session until its in-flight
calls finish (or a grace period ends), then the session closes.

Sessions never keep cookies (``DummyCookieJar``): one caller's cookies set by a function
must never ride along on another caller's request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sless.backends.base import Upstream
from sless.backends.http1 import Http1Client
from sless.errors import NotReady
from sless.models.endings import Ending

log = logging.getLogger(__name__)

SERVICE_LABEL = "kubernetes.io/service-name"
ServiceKey = tuple[str, str]


def _port_of(ports: Any) -> int | None:
    if not isinstance(ports, list) or not ports:
        return None
    chosen = next((p for p in ports if isinstance(p, dict) and p.get("name") == "http"), None)
    if chosen is None:
        chosen = ports[0] if isinstance(ports[0], dict) else None
    port = (chosen or {}).get("port")
    return port if isinstance(port, int) and 0 < port < 65536 else None


def addresses_of(endpoint_slice: dict[str, Any]) -> frozenset[str]:
    """``http://ip:port`` of every ready endpoint of one EndpointSlice."""
    family = endpoint_slice.get("addressType")
    if family not in ("IPv4", "IPv6"):
        return frozenset()
    port = _port_of(endpoint_slice.get("ports"))
    if port is None:
        return frozenset()
    found = set()
    for endpoint in endpoint_slice.get("endpoints") or []:
        conditions = endpoint.get("conditions") or {}
        if conditions.get("ready") is False or conditions.get("terminating") is True:
            continue
        for address in endpoint.get("addresses") or []:
            host = f"[{address}]" if family == "IPv6" else address
            found.add(f"http://{host}:{port}")
    return frozenset(found)


class SliceIndex:
    """Ready addresses per (namespace, Service), from EndpointSlices."""

    def __init__(self) -> None:
        #: (namespace, slice name) -> (service, its ready addresses)
        self._slices: dict[tuple[str, str], tuple[str, frozenset[str]]] = {}
        #: (namespace, service) -> names of its slices
        self._members: dict[ServiceKey, set[str]] = {}
        self._services: dict[ServiceKey, frozenset[str]] = {}

    def reset(self, slices: Iterable[dict[str, Any]]) -> set[ServiceKey]:
        """Replace everything; the services whose addresses changed."""
        before = dict(self._services)
        self._slices.clear()
        self._members.clear()
        self._services.clear()
        for item in slices:
            self._store(item)
        self._recompute(set(self._members))
        return {k for k in set(before) | set(self._services) if before.get(k) != self.get(*k)}

    def apply(self, kind: str, item: dict[str, Any]) -> set[ServiceKey]:
        """One watch event; the services whose addresses changed."""
        metadata = item.get("metadata") or {}
        namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
        touched: set[ServiceKey] = set()
        old = self._slices.pop((namespace, name), None)
        if old is not None:
            touched.add((namespace, old[0]))
            self._members.get((namespace, old[0]), set()).discard(name)
        if kind != "DELETED":
            service = self._store(item)
            if service is not None:
                touched.add((namespace, service))
        before = {key: self.get(*key) for key in touched}
        self._recompute(touched)
        return {key for key in touched if before[key] != self.get(*key)}

    def get(self, namespace: str, service: str) -> frozenset[str]:
        return self._services.get((namespace, service), frozenset())

    def _store(self, item: dict[str, Any]) -> str | None:
        metadata = item.get("metadata") or {}
        service = (metadata.get("labels") or {}).get(SERVICE_LABEL)
        if not service:
            return None
        namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
        self._slices[(namespace, name)] = (str(service), addresses_of(item))
        self._members.setdefault((namespace, str(service)), set()).add(name)
        return str(service)

    def _recompute(self, services: set[ServiceKey]) -> None:
        for key in services:
            namespace = key[0]
            names = self._members.get(key, set())
            merged: set[str] = set()
            for name in names:
                merged |= self._slices[(namespace, name)][1]
            if not names:
                self._members.pop(key, None)
            if merged:
                self._services[key] = frozenset(merged)
            else:
                self._services.pop(key, None)


@dataclass
class _Endpoint:
    base_url: str
    limit: int
    client: Http1Client | None = None
    inflight: int = 0
    down_until: float = 0.0
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def open_client(self) -> Http1Client:
        if self.client is None:
            url = urlsplit(self.base_url)
            if url.hostname is None or url.port is None:
                raise NotReady(f"endpoint {self.base_url!r} has no host and port")
            self.client = Http1Client.tcp(url.hostname, url.port, max_idle=self.limit)
        return self.client

    async def close(self, grace_s: float) -> None:
        if self.inflight:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace_s):
                    while self.inflight:
                        self.idle.clear()
                        await self.idle.wait()
        if self.client is not None:
            await self.client.close()
            self.client = None


#: (base URL, when the call broke) → how that instance ended
EndingOf = Callable[[str, float], Awaitable[Ending | None]]


class EndpointPool:
    """The instances of one function and a lease on the least busy one."""

    def __init__(
        self,
        name: str,
        *,
        cooldown_s: float = 5.0,
        grace_s: float = 10.0,
        ending_of: EndingOf | None = None,
    ) -> None:
        self.name = name
        #: how the instance at a base URL ended, for a call that broke at a time (epoch s)
        self.ending_of = ending_of
        self.cooldown_s = cooldown_s
        self.grace_s = grace_s
        self._endpoints: dict[str, _Endpoint] = {}
        self._turn = 0
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def addresses(self) -> frozenset[str]:
        return frozenset(self._endpoints)

    def update(self, addresses: frozenset[str], *, limit: int) -> None:
        """Follow the ready addresses; a new connection limit (the serving spec's
        concurrency changed) replaces every session, letting the old ones drain."""
        limit = max(1, limit)
        for address in list(self._endpoints):
            if address not in addresses or self._endpoints[address].limit != limit:
                self._retire(self._endpoints.pop(address))
        for address in addresses - set(self._endpoints):
            self._endpoints[address] = _Endpoint(base_url=address, limit=limit)

    def _retire(self, endpoint: _Endpoint) -> None:
        task = asyncio.create_task(endpoint.close(self.grace_s))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _pick(self) -> _Endpoint:
        endpoints = list(self._endpoints.values())
        if not endpoints:
            raise NotReady(f"function {self.name!r} has no ready instances")
        now = time.monotonic()
        healthy = [e for e in endpoints if e.down_until <= now] or endpoints
        self._turn = (self._turn + 1) % len(healthy)
        rotated = healthy[self._turn :] + healthy[: self._turn]
        return min(rotated, key=lambda e: e.inflight)

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Upstream]:
        endpoint = self._pick()
        upstream = Upstream(client=endpoint.open_client())
        if self.ending_of is not None:
            ending_of, base_url = self.ending_of, endpoint.base_url
            upstream.ending = lambda: ending_of(base_url, time.time())
        endpoint.inflight += 1
        try:
            yield upstream
        finally:
            endpoint.inflight -= 1
            if endpoint.inflight == 0:
                endpoint.idle.set()
            if upstream.failed:
                endpoint.down_until = time.monotonic() + self.cooldown_s
                log.info("endpoint %s of %s failed; skipping it", endpoint.base_url, self.name)

    async def close(self) -> None:
        for endpoint in self._endpoints.values():
            self._retire(endpoint)
        self._endpoints.clear()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

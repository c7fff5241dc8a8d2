"""How many connections a tenant, and one function, may hold through the egress proxy.

Every connection a function opens through its egress proxy (a ``CONNECT`` tunnel or a
proxied plain-HTTP request) holds two descriptors of the gateway: the proxy's end of the
Unix socket and the upstream TCP connection. Without a cap, what one tenant holds is
bounded only by its workers' open-file limit times their instances, all of it taken from
the gateway's own descriptors (those its callers and every other tenant need): nginx's
``limit_conn`` exists for the same reason. So each connection takes a slot of its function
and of its tenant for as long as it is open (from accept to close: a connection that never
sends its request head holds one too, at most the proxy's head timeout); one past a cap is
refused at once with 429 and the reason, and closing a connection frees its slots.

The counts live in the gateway process (``sless up`` runs one); one :class:`TunnelCaps`
is shared by every proxy of a backend, so a tenant's functions and versions count together.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

#: at most one refusal line per tenant this often (the refusals in between are counted)
_LOG_EVERY_S = 10.0


@dataclass(frozen=True, slots=True)
class Slot:
    """One held connection: give it back with :meth:`TunnelCaps.release`."""

    tenant: str
    function: str


@dataclass
class TunnelCaps:
    """Connections held at once through the egress proxies: ``per_tenant`` for all of a
    tenant's functions, ``per_function`` for each of them (all its versions)."""

    per_tenant: int
    per_function: int
    _tenants: Counter[str] = field(default_factory=Counter)
    _functions: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: refusals per tenant since start (a counter metric; tenants are bounded)
    refused: Counter[str] = field(default_factory=Counter)
    _logged: dict[str, tuple[float, int]] = field(default_factory=dict)

    def acquire(self, tenant: str, function: str) -> Slot | str:
        """A slot for one more connection of ``function`` (its name within ``tenant``'s
        namespace), or the reason it is refused."""
        if self._functions[tenant, function] >= self.per_function:
            reason = (
                f"function {function} holds {self.per_function} egress connections, "
                "its cap: close one first"
            )
        elif self._tenants[tenant] >= self.per_tenant:
            reason = (
                f"tenant {tenant} holds {self.per_tenant} egress connections, "
                "its cap: close one first"
            )
        else:
            self._tenants[tenant] += 1
            self._functions[tenant, function] += 1
            return Slot(tenant, function)
        self.refused[tenant] += 1
        self._log(tenant, reason)
        return reason

    def release(self, slot: Slot) -> None:
        key = (slot.tenant, slot.function)
        self._tenants[slot.tenant] -= 1
        self._functions[key] -= 1
        if self._tenants[slot.tenant] <= 0:
            del self._tenants[slot.tenant]
        if self._functions[key] <= 0:
            del self._functions[key]

    def held(self, tenant: str) -> int:
        """Connections ``tenant`` holds now."""
        return self._tenants[tenant]

    def counts(self) -> dict[str, tuple[int, int]]:
        """``tenant → (held now, refused since start)``, for metrics."""
        tenants = set(self._tenants) | set(self.refused)
        return {t: (self._tenants[t], self.refused[t]) for t in sorted(tenants)}

    def _log(self, tenant: str, reason: str) -> None:
        """A warning per tenant at most every ``_LOG_EVERY_S``: names and counts only
        (the destination is the tenant's business; no header or body is ever read here)."""
        now = time.monotonic()
        last, skipped = self._logged.get(tenant, (-_LOG_EVERY_S, 0))
        if now - last < _LOG_EVERY_S:
            self._logged[tenant] = (last, skipped + 1)
            return
        self._logged[tenant] = (now, 0)
        more = f" ({skipped} more refused since the last line)" if skipped else ""
        log.warning("egress connection refused: %s%s", reason, more)

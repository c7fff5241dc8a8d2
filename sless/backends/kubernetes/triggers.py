"""Every Trigger resource of the tenants' namespaces, kept in memory by a watch.

What the ``sless events`` process consumes from: the RabbitMQ consumers read this index
instead of the database (``sless.events.sources``). The view is the watcher's
(``watching.py``): eventually exact, a missed event can only delay it. Each entry carries a
version, ``<uid>/<generation>``: the API server raises ``metadata.generation`` on every
change of the spec and never on a status write (the CRD has a status subresource), and a
Trigger deleted and created again has a new uid. A reader can thus tell a trigger whose
spec changed from one that did not, and the operator writing its status restarts nothing.

A Trigger being deleted (a finalizer still runs) is gone here at once, as it is for the API.
A spec that does not parse (written around the gateway, with kubectl) is skipped with a
warning naming the fields, never their values; Triggers outside tenant namespaces
(``sless-*``) are ignored: no tenant could have written them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sless.backends.kubernetes.resources import is_terminating, trigger_from_body
from sless.errors import Invalid
from sless.models import Trigger, namespace_for

log = logging.getLogger(__name__)

_TENANT_NAMESPACE_PREFIX = namespace_for("")


@dataclass(frozen=True, slots=True)
class IndexedTrigger:
    trigger: Trigger
    #: ``<uid>/<generation>``: changes whenever the spec does (status writes do not count)
    version: str


class TriggerIndex:
    """The index; ``reset`` and ``apply`` are a ``Watcher``'s callbacks (on the loop)."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._items: dict[tuple[str, str], IndexedTrigger] = {}
        self._on_change = on_change

    def triggers(self) -> list[IndexedTrigger]:
        return sorted(self._items.values(), key=lambda i: (i.trigger.namespace, i.trigger.name))

    def reset(self, items: list[dict[str, Any]]) -> None:
        self._items = {}
        for item in items:
            self._put(item)
        self._changed()

    def apply(self, kind: str, item: dict[str, Any]) -> None:
        if kind == "DELETED":
            self._items.pop(_key_of(item), None)
        else:
            self._put(item)
        self._changed()

    def _put(self, item: dict[str, Any]) -> None:
        key = _key_of(item)
        self._items.pop(key, None)
        if not key[0].startswith(_TENANT_NAMESPACE_PREFIX) or is_terminating(item):
            return
        try:
            trigger = trigger_from_body(item)
        except Invalid as e:
            log.warning("trigger %s/%s is skipped: %s", key[0], key[1], e.message)
            return
        metadata = item.get("metadata") or {}
        version = f"{metadata.get('uid', '')}/{metadata.get('generation', '')}"
        self._items[key] = IndexedTrigger(trigger, version)

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change()


def _key_of(item: dict[str, Any]) -> tuple[str, str]:
    metadata = item.get("metadata") or {}
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))

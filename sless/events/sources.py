"""Where the RabbitMQ consumers learn which triggers to consume: one small protocol, two
implementations, so the consumers (``consuming.py``) are the same code in both modes.

- embedded mode, ``DatabaseTriggers``: the ``triggers`` table. The gateway that writes a
  trigger wakes its own consumers at once (``Events.trigger_changed``); the other gateways
  on the same database see it at their next pass (``scheduler_interval_s``).
- Kubernetes mode, ``ClusterTriggers``: the Trigger custom resources, listed then watched
  through the backend (``TriggerWatcher.watch_triggers``); every change wakes
  the consumers at once. It runs in the ``sless events`` process, never in the gateway.

Each trigger comes with a ``version`` that changes whenever the trigger is written (the
row's ``updated_at``; the object's uid and ``generation``, which a status write leaves
alone): a consumer started from another version is restarted. Broker URLs are not here:
they stay tenant secrets in PostgreSQL (``SecretRepository``) in both modes, read by the
consumers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sless.backends import TriggerWatch, TriggerWatcher
from sless.models import Trigger
from sless.store import TriggerRepository


@dataclass(frozen=True, slots=True)
class RabbitTrigger:
    """An enabled ``rabbitmq`` trigger, as the consumers see it."""

    trigger: Trigger
    #: changes whenever the trigger is written
    version: str


class TriggerSource(Protocol):
    def subscribe(self, wake: Callable[[], None]) -> None:
        """Call ``wake`` whenever the triggers may have changed (a hint: the consumers
        also read ``rabbitmq_triggers`` every ``scheduler_interval_s``)."""

    async def rabbitmq_triggers(self) -> list[RabbitTrigger]:
        """The enabled rabbitmq triggers of every tenant, now."""


class DatabaseTriggers:
    """Embedded mode: the triggers table."""

    def __init__(self, repository: TriggerRepository) -> None:
        self.repository = repository

    def subscribe(self, wake: Callable[[], None]) -> None:
        del wake  # writes in this process wake the consumers through Events.trigger_changed

    async def rabbitmq_triggers(self) -> list[RabbitTrigger]:
        return [
            RabbitTrigger(record.trigger, record.updated_at.isoformat())
            for record in await self.repository.list_enabled_rabbitmq()
        ]


class ClusterTriggers:
    """Kubernetes mode: the Trigger resources, watched through the backend.

    ``start`` must have returned before the consumers read; it raises
    ``BackendUnavailable`` when the first list does not come.
    """

    def __init__(self, backend: TriggerWatcher) -> None:
        self.backend = backend
        self._index: TriggerWatch | None = None
        self._subscribers: list[Callable[[], None]] = []

    async def start(self) -> None:
        if self._index is None:
            self._index = await self.backend.watch_triggers(self._changed)

    def subscribe(self, wake: Callable[[], None]) -> None:
        self._subscribers.append(wake)

    def _changed(self) -> None:
        for wake in self._subscribers:
            wake()

    async def rabbitmq_triggers(self) -> list[RabbitTrigger]:
        if self._index is None:
            raise RuntimeError("ClusterTriggers.start() has not run")
        return [
            RabbitTrigger(item.trigger, item.version)
            for item in self._index.triggers()
            if item.trigger.spec.type == "rabbitmq" and item.trigger.spec.enabled
        ]

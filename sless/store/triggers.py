"""Triggers (embedded mode) and the cron ticks schedulers claimed.

A tick is claimed by inserting ``(namespace, trigger, tick)``: the primary key lets exactly
one of any number of gateway processes win it, so each tick fires at most once.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from sless.errors import NotFound
from sless.models import Trigger, TriggerSpec, TriggerStatus
from sless.store.db import resource_version_of

#: specs in the table were validated when written; a seconds field stays readable
_READ_CONTEXT = {"allow_seconds": True}


@dataclass(frozen=True)
class TriggerRecord:
    trigger: Trigger
    created_at: datetime
    updated_at: datetime

    @property
    def spec(self) -> TriggerSpec:
        return self.trigger.spec


def _record(row: Any, last_tick: datetime | None = None) -> TriggerRecord:
    spec = TriggerSpec.model_validate(row["spec"], context=_READ_CONTEXT)
    status = TriggerStatus(
        phase="Active" if spec.enabled else "Suspended",
        updated_at=row["updated_at"],
        last_tick=last_tick,
    )
    trigger = Trigger.model_validate(
        {
            "name": row["name"],
            "namespace": row["namespace"],
            "spec": spec,
            "status": status,
            "resource_version": resource_version_of(row),
        },
        context=_READ_CONTEXT,
    )
    return TriggerRecord(
        trigger=trigger, created_at=row["created_at"], updated_at=row["updated_at"]
    )


_SELECT = """
SELECT t.*, (SELECT max(k.tick) FROM trigger_ticks k
              WHERE k.namespace = t.namespace AND k.trigger = t.name) AS last_tick
  FROM triggers t
"""


class TriggerRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put(self, namespace: str, name: str, spec: TriggerSpec) -> tuple[TriggerRecord, bool]:
        """Create or replace; returns the record and whether it was created."""
        row = await self.pool.fetchrow(
            """
            INSERT INTO triggers (namespace, name, spec) VALUES ($1, $2, $3)
            ON CONFLICT (namespace, name) DO UPDATE
               SET spec = EXCLUDED.spec, updated_at = now()
            RETURNING *, (xmax = 0) AS created
            """,
            namespace,
            name,
            spec.model_dump(mode="json"),
        )
        return _record(row), bool(row["created"])

    async def get(self, namespace: str, name: str) -> TriggerRecord:
        row = await self.pool.fetchrow(
            _SELECT + " WHERE t.namespace = $1 AND t.name = $2", namespace, name
        )
        if row is None:
            raise NotFound(f"trigger {name!r} not found")
        return _record(row, row["last_tick"])

    async def list_all(self, namespace: str) -> list[TriggerRecord]:
        rows = await self.pool.fetch(_SELECT + " WHERE t.namespace = $1 ORDER BY t.name", namespace)
        return [_record(r, r["last_tick"]) for r in rows]

    async def list_enabled_cron(self) -> list[TriggerRecord]:
        rows = await self.pool.fetch(
            _SELECT + " WHERE t.spec->>'type' = 'cron'"
            " AND coalesce((t.spec->>'enabled')::boolean, true)"
        )
        return [_record(r, r["last_tick"]) for r in rows]

    async def list_enabled_rabbitmq(self) -> list[TriggerRecord]:
        rows = await self.pool.fetch(
            "SELECT t.*, NULL AS last_tick FROM triggers t WHERE t.spec->>'type' = 'rabbitmq'"
            " AND coalesce((t.spec->>'enabled')::boolean, true)"
        )
        return [_record(r) for r in rows]

    async def delete(self, namespace: str, name: str) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            result = await conn.execute(
                "DELETE FROM triggers WHERE namespace = $1 AND name = $2", namespace, name
            )
            if result == "DELETE 0":
                raise NotFound(f"trigger {name!r} not found")
            await conn.execute(
                "DELETE FROM trigger_ticks WHERE namespace = $1 AND trigger = $2", namespace, name
            )

    async def delete_namespace(self, namespace: str) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("DELETE FROM triggers WHERE namespace = $1", namespace)
            await conn.execute("DELETE FROM trigger_ticks WHERE namespace = $1", namespace)

    async def claim_tick(
        self, namespace: str, trigger: str, tick: datetime, invocation_id: uuid.UUID
    ) -> bool:
        """Take ``tick`` for this process; False when another scheduler took it first."""
        row = await self.pool.fetchrow(
            "INSERT INTO trigger_ticks (namespace, trigger, tick, invocation_id)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING tick",
            namespace,
            trigger,
            tick,
            invocation_id,
        )
        return row is not None

    async def prune_ticks(self, older_than: datetime) -> None:
        """Drop claims no scheduler can ask about again (outside every catch-up window)."""
        await self.pool.execute(
            """
            DELETE FROM trigger_ticks k
             WHERE k.tick < $1
               AND k.tick < (SELECT max(k2.tick) FROM trigger_ticks k2
                              WHERE k2.namespace = k.namespace AND k2.trigger = k.trigger)
            """,
            older_than,
        )

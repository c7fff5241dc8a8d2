"""Triggers (embedded mode) and the cron ticks schedulers claimed.

A tick is claimed by inserting ``(namespace, trigger, tick)``: the primary key lets exactly
one of any number of gateway processes win it. The claim carries a lease (a uuid, the
fence) until the tick plus a margin; ``start_tick`` stamps it ``started`` in PostgreSQL
before the function is called (the lease then runs to the function's timeout plus the
margin) and ``finish_tick`` ends it ``finished`` with its invocation record, in one
transaction. ``recover_ticks`` takes over the ticks whose lease ran out (their scheduler
stopped): a tick claimed but never started is fired (inside the catch-up window; else
``skipped``), a started one is ``interrupted``, with an invocation record saying so. So a
tick is fired once or recorded interrupted: never twice, never silently lost.
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
from sless.store.invocations import InvocationRecord, insert_records
from sless.store.queue import INTERRUPTED

#: specs in the table were validated when written; a seconds field stays readable
_READ_CONTEXT = {"allow_seconds": True}


#: timeout assumed for a function the table does not know (deleted meanwhile)
_DEFAULT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ClaimedTick:
    """A tick this scheduler holds: fire it with ``invocation_id`` under ``lease``."""

    namespace: str
    trigger: str
    tick: datetime
    invocation_id: uuid.UUID
    lease: uuid.UUID


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


def _claimed(row: Any) -> ClaimedTick:
    return ClaimedTick(
        namespace=row["namespace"],
        trigger=row["trigger"],
        tick=row["tick"],
        invocation_id=row["invocation_id"],
        lease=row["lease"],
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
        self,
        namespace: str,
        trigger: str,
        tick: datetime,
        invocation_id: uuid.UUID,
        *,
        lease_margin_s: float,
    ) -> ClaimedTick | None:
        """Take ``tick`` for this process, leased until the tick plus the margin; None
        when another scheduler took it first."""
        row = await self.pool.fetchrow(
            "INSERT INTO trigger_ticks"
            " (namespace, trigger, tick, invocation_id, state, lease, locked_until)"
            " VALUES ($1, $2, $3::timestamptz, $4, 'claimed', gen_random_uuid(),"
            "         $3::timestamptz + make_interval(secs => $5::float8))"
            " ON CONFLICT DO NOTHING RETURNING *",
            namespace,
            trigger,
            tick,
            invocation_id,
            lease_margin_s,
        )
        return _claimed(row) if row is not None else None

    async def start_tick(self, claimed: ClaimedTick, function: str, lease_margin_s: float) -> bool:
        """Stamp the tick started (before the function is called), its lease now the
        function's timeout plus the margin; False when this scheduler no longer holds it
        (do not fire it)."""
        result: str = await self.pool.execute(
            """
            UPDATE trigger_ticks
               SET state = 'started', started_at = now(),
                   locked_until = now() + make_interval(secs => $5::float8 + coalesce(
                       (SELECT (f.serving_spec->>'timeout_s')::float FROM functions f
                         WHERE f.namespace = $1 AND f.name = $6), $7))
             WHERE namespace = $1 AND trigger = $2 AND tick = $3 AND lease = $4
               AND state = 'claimed'
            """,
            claimed.namespace,
            claimed.trigger,
            claimed.tick,
            claimed.lease,
            lease_margin_s,
            function,
            _DEFAULT_TIMEOUT_S,
        )
        return result != "UPDATE 0"

    async def finish_tick(self, claimed: ClaimedTick, record: InvocationRecord) -> bool:
        """End the tick ``finished`` with its invocation record, in one transaction;
        False (nothing written) when it was recorded interrupted meanwhile."""
        async with self.pool.acquire() as conn, conn.transaction():
            result: str = await conn.execute(
                "UPDATE trigger_ticks SET state = 'finished', finished_at = now(),"
                " lease = NULL, locked_until = NULL"
                " WHERE namespace = $1 AND trigger = $2 AND tick = $3 AND lease = $4"
                " AND state = 'started'",
                claimed.namespace,
                claimed.trigger,
                claimed.tick,
                claimed.lease,
            )
            if result == "UPDATE 0":
                return False
            await insert_records(conn, [record])
        return True

    async def recover_ticks(
        self,
        *,
        fire_after: datetime,
        lease_margin_s: float,
        all_open: bool = False,
    ) -> list[ClaimedTick]:
        """Take over the ticks whose scheduler stopped: their lease ran out (or,
        ``all_open``, every open one: this process is the database's only user and has
        just started). A started tick ends ``interrupted`` with its invocation record;
        a claimed, never started one is returned under a new lease to be fired, when it
        is after ``fire_after`` (the catch-up window) and its trigger is enabled, else
        it ends ``skipped``."""
        stale = "TRUE" if all_open else "k.locked_until < now()"
        async with self.pool.acquire() as conn, conn.transaction():
            cut = await conn.fetch(
                f"""
                UPDATE trigger_ticks k
                   SET state = 'interrupted', finished_at = now(), lease = NULL,
                       locked_until = NULL
                  FROM triggers t
                 WHERE t.namespace = k.namespace AND t.name = k.trigger
                   AND k.state = 'started' AND {stale}
                RETURNING k.namespace, k.trigger, k.invocation_id, k.started_at,
                          k.finished_at, t.spec->>'function' AS function
                """  # noqa: S608 - fixed SQL text
            )
            records = [
                InvocationRecord.of_call(
                    r["invocation_id"],
                    r["namespace"],
                    r["function"],
                    status=500,
                    duration_ms=max(
                        0.0, (r["finished_at"] - r["started_at"]).total_seconds() * 1000
                    ),
                    request_bytes=0,
                    response_bytes=0,
                    started_at=r["started_at"],
                    error=INTERRUPTED,
                    trigger=r["trigger"],
                )
                for r in cut
                if r["invocation_id"] is not None
            ]
            if records:
                await insert_records(conn, records)
            taken = await conn.fetch(
                f"""
                WITH open AS (
                    SELECT k.namespace, k.trigger, k.tick,
                           coalesce((t.spec->>'enabled')::boolean, true)
                           AND k.tick > $1::timestamptz AND k.invocation_id IS NOT NULL AS fire
                      FROM trigger_ticks k
                      JOIN triggers t ON t.namespace = k.namespace AND t.name = k.trigger
                     WHERE k.state = 'claimed' AND {stale}
                       FOR UPDATE OF k SKIP LOCKED)
                UPDATE trigger_ticks k
                   SET state = CASE WHEN o.fire THEN 'claimed' ELSE 'skipped' END,
                       lease = CASE WHEN o.fire THEN gen_random_uuid() END,
                       locked_until = CASE WHEN o.fire
                           THEN greatest(k.tick, now()) + make_interval(secs => $2::float8) END,
                       finished_at = CASE WHEN o.fire THEN NULL ELSE now() END
                  FROM open o
                 WHERE k.namespace = o.namespace AND k.trigger = o.trigger AND k.tick = o.tick
                RETURNING k.*
                """,  # noqa: S608 - fixed SQL text
                fire_after,
                lease_margin_s,
            )
        return [_claimed(r) for r in taken if r["state"] == "claimed"]

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

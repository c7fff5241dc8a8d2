"""Jobs (embedded mode): each new ``run_id`` runs the function exactly once.

``run_id`` in the table is the last run *claimed*. A runner claims a run inside a
transaction that locks the row (``FOR UPDATE SKIP LOCKED``) and raises ``run_id`` to the
spec's; once committed, no runner in any process can claim that run id again, across
restarts. The price is at-most-once: a gateway that stops in the middle of a run leaves
the run ``Failed`` ("interrupted") once its deadline passed, and it is not retried.

A ``PUT`` with a ``run_id`` lower than the stored spec's is refused (409): runs only move
forward. The same ``run_id`` again updates nothing that matters and starts nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg

from sless.errors import Conflict, NotFound
from sless.models import FunctionJob, FunctionJobStatus, JobPhase, JobSpec
from sless.store.db import resource_version_of


@dataclass(frozen=True)
class JobRecord:
    job: FunctionJob
    #: the run id the spec asks for (claimed when > job.status.run_id)
    wanted_run_id: int
    claimed_run_id: int

    @property
    def key(self) -> tuple[str, str]:
        return self.job.namespace, self.job.name


def _record(row: Any) -> JobRecord:
    spec = JobSpec.model_validate(row["spec"])
    status = FunctionJobStatus(
        phase=JobPhase(row["phase"]),
        message=row["message"],
        run_id=row["run_id"] or None,
        result=row["result"],
        error=row["error"],
        started_at=row["started_at"],
        completed_at=row["completed_at"],
        invocation_id=str(row["invocation_id"]) if row["invocation_id"] else None,
    )
    job = FunctionJob(
        name=row["name"],
        namespace=row["namespace"],
        spec=spec,
        status=status,
        resource_version=resource_version_of(row),
    )
    return JobRecord(job=job, wanted_run_id=spec.run_id, claimed_run_id=row["run_id"])


@dataclass(frozen=True)
class Decision:
    """What a runner does with a pending run: start it now, let it wait, or fail it."""

    action: Literal["run", "wait", "fail"]
    message: str = ""
    #: run: how long the run may take before it counts as interrupted
    deadline_s: float = 0.0


@dataclass(frozen=True)
class InterruptedRun:
    """A job run its gateway left Running, now Failed (``fail_interrupted``)."""

    namespace: str
    name: str
    function: str
    invocation_id: uuid.UUID
    started_at: datetime
    completed_at: datetime


class JobRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def put(self, namespace: str, name: str, spec: JobSpec) -> tuple[JobRecord, bool]:
        """Create or update; a higher ``run_id`` makes the job Pending. Returns (record,
        created). A lower ``run_id`` than the current spec's is a Conflict."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "SELECT * FROM jobs WHERE namespace = $1 AND name = $2 FOR UPDATE",
                namespace,
                name,
            )
            if row is None:
                phase = JobPhase.PENDING if spec.run_id > 0 else JobPhase.IDLE
                row = await conn.fetchrow(
                    "INSERT INTO jobs (namespace, name, spec, phase) VALUES ($1, $2, $3, $4)"
                    " RETURNING *",
                    namespace,
                    name,
                    spec.model_dump(mode="json"),
                    phase.value,
                )
                return _record(row), True
            current = JobSpec.model_validate(row["spec"])
            if spec.run_id < current.run_id:
                raise Conflict(
                    f"run_id {spec.run_id} is lower than the job's run_id {current.run_id}:"
                    " runs only move forward"
                )
            phase = JobPhase(row["phase"])
            if spec.run_id > current.run_id and phase is not JobPhase.RUNNING:
                # a run in progress finishes first: runs of one job never overlap
                phase = JobPhase.PENDING
            row = await conn.fetchrow(
                "UPDATE jobs SET spec = $3, phase = $4, updated_at = now()"
                " WHERE namespace = $1 AND name = $2 RETURNING *",
                namespace,
                name,
                spec.model_dump(mode="json"),
                phase.value,
            )
            return _record(row), False

    async def get(self, namespace: str, name: str) -> JobRecord:
        row = await self.pool.fetchrow(
            "SELECT * FROM jobs WHERE namespace = $1 AND name = $2", namespace, name
        )
        if row is None:
            raise NotFound(f"job {name!r} not found")
        return _record(row)

    async def list_all(self, namespace: str) -> list[JobRecord]:
        rows = await self.pool.fetch(
            "SELECT * FROM jobs WHERE namespace = $1 ORDER BY name", namespace
        )
        return [_record(r) for r in rows]

    async def delete(self, namespace: str, name: str) -> None:
        result = await self.pool.execute(
            "DELETE FROM jobs WHERE namespace = $1 AND name = $2", namespace, name
        )
        if result == "DELETE 0":
            raise NotFound(f"job {name!r} not found")

    async def delete_namespace(self, namespace: str) -> None:
        await self.pool.execute("DELETE FROM jobs WHERE namespace = $1", namespace)

    async def claim(
        self,
        decide: Callable[[JobRecord], Awaitable[Decision]],
        *,
        limit: int = 10,
    ) -> list[tuple[JobRecord, uuid.UUID]]:
        """Look at pending runs no other runner holds; start (claim), wait or fail each as
        ``decide`` says. Returns the runs claimed with their new invocation ids."""
        claimed: list[tuple[JobRecord, uuid.UUID]] = []
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                """
                SELECT * FROM jobs
                 WHERE phase <> 'Running' AND (spec->>'run_id')::bigint > run_id
                 ORDER BY updated_at LIMIT $1
                 FOR UPDATE SKIP LOCKED
                """,
                limit,
            )
            for row in rows:
                record = _record(row)
                decision = await decide(record)
                namespace, name = record.key
                if decision.action == "wait":
                    if row["phase"] != JobPhase.WAITING.value or row["message"] != decision.message:
                        await conn.execute(
                            "UPDATE jobs SET phase = 'Waiting', message = $3, updated_at = now()"
                            " WHERE namespace = $1 AND name = $2",
                            namespace,
                            name,
                            decision.message[:500],
                        )
                    continue
                invocation_id = uuid.uuid4()
                if decision.action == "fail":
                    await conn.execute(
                        """
                        UPDATE jobs SET run_id = (spec->>'run_id')::bigint, phase = 'Failed',
                               message = '', error = $3, result = NULL, invocation_id = NULL,
                               started_at = now(), completed_at = now(), updated_at = now()
                         WHERE namespace = $1 AND name = $2
                        """,
                        namespace,
                        name,
                        decision.message[:500],
                    )
                    continue
                row = await conn.fetchrow(
                    """
                    UPDATE jobs SET run_id = (spec->>'run_id')::bigint, phase = 'Running',
                           message = '', error = NULL, result = NULL, invocation_id = $3,
                           started_at = now(), completed_at = NULL,
                           deadline_at = now() + make_interval(secs => $4),
                           updated_at = now()
                     WHERE namespace = $1 AND name = $2
                    RETURNING *
                    """,
                    namespace,
                    name,
                    invocation_id,
                    decision.deadline_s,
                )
                claimed.append((_record(row), invocation_id))
        return claimed

    async def finish(
        self,
        namespace: str,
        name: str,
        invocation_id: uuid.UUID,
        *,
        succeeded: bool,
        result: str | None,
        error: str | None,
    ) -> None:
        """Record how a run ended; a newer run (another invocation id) is left alone."""
        await self.pool.execute(
            """
            UPDATE jobs SET result = $5, error = $6, completed_at = now(), updated_at = now(),
                   -- a newer run asked for meanwhile waits for its turn
                   phase = CASE WHEN (spec->>'run_id')::bigint > run_id THEN 'Pending' ELSE $4 END
             WHERE namespace = $1 AND name = $2 AND invocation_id = $3 AND phase = 'Running'
            """,
            namespace,
            name,
            invocation_id,
            (JobPhase.SUCCEEDED if succeeded else JobPhase.FAILED).value,
            result,
            error,
        )

    async def fail_interrupted(self, *, all_running: bool = False) -> list[InterruptedRun]:
        """Runs whose gateway stopped mid-run: Failed ("interrupted"), never started again.
        A run is that once its deadline passed, or (``all_running``) at once: this process
        is the database's only user and has just started. Returns them (for their
        invocation records)."""
        stale = "TRUE" if all_running else "deadline_at < now()"
        rows = await self.pool.fetch(
            f"""
            UPDATE jobs SET phase = 'Failed', completed_at = now(), updated_at = now(),
                   error = 'interrupted: the gateway running it stopped'
             WHERE phase = 'Running' AND {stale}
            RETURNING namespace, name, spec->>'function' AS function, invocation_id,
                      started_at, completed_at
            """  # noqa: S608 - fixed SQL text
        )
        return [
            InterruptedRun(
                namespace=r["namespace"],
                name=r["name"],
                function=r["function"],
                invocation_id=r["invocation_id"],
                started_at=r["started_at"],
                completed_at=r["completed_at"],
            )
            for r in rows
            if r["invocation_id"] is not None
        ]

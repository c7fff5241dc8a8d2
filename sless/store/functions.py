"""Functions: desired spec and observed status, one row each.

Every change bumps ``generation`` and sends a NOTIFY on ``sless_functions`` so that the
reconcilers of every gateway process converge without polling.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

from sless.errors import NotFound
from sless.models import Function, FunctionSpec, FunctionStatus, Phase
from sless.store.db import resource_version_of

NOTIFY_CHANNEL = "sless_functions"


@dataclass(frozen=True)
class FunctionRecord:
    """A function as stored, with the spec that is serving (the last one that built)."""

    function: Function
    serving_spec: FunctionSpec | None
    generation: int

    @property
    def key(self) -> tuple[str, str]:
        return self.function.namespace, self.function.name


def _record(row: Any) -> FunctionRecord:
    status = FunctionStatus(
        phase=Phase(row["phase"]),
        message=row["message"],
        validation=row["validation"],
        observed_sha256=row["observed_sha256"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
    spec = FunctionSpec.model_validate(row["spec"])
    serving = FunctionSpec.model_validate(row["serving_spec"]) if row["serving_spec"] else None
    status.version = serving.version if serving is not None else None
    function = Function(
        name=row["name"],
        namespace=row["namespace"],
        spec=spec,
        status=status,
        resource_version=resource_version_of(row),
    )
    return FunctionRecord(function=function, serving_spec=serving, generation=row["generation"])


class FunctionRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def _notify(self, conn: asyncpg.Connection, namespace: str, name: str) -> None:
        payload = json.dumps({"namespace": namespace, "name": name})
        await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL, payload)

    async def upsert_spec(
        self,
        namespace: str,
        name: str,
        spec: FunctionSpec,
        *,
        phase: Phase = Phase.PENDING,
        message: str = "",
    ) -> FunctionRecord:
        """Create or replace the spec; ``phase``: Pending for the reconciler, or what the
        code gate says of code that may not serve (Validating, Rejected)."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                """
                INSERT INTO functions (namespace, name, spec, phase, message)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (namespace, name) DO UPDATE
                   SET spec = EXCLUDED.spec, phase = EXCLUDED.phase,
                       message = EXCLUDED.message,
                       generation = functions.generation + 1, updated_at = now()
                RETURNING *
                """,
                namespace,
                name,
                spec.model_dump(mode="json"),
                phase.value,
                message,
            )
            await self._notify(conn, namespace, name)
        return _record(row)

    async def replace_spec(
        self,
        namespace: str,
        name: str,
        spec: FunctionSpec,
        *,
        phase: Phase,
        message: str = "",
        validation: dict[str, Any] | None = None,
    ) -> FunctionRecord:
        """Change the spec of an existing function (a new upload) and its phase."""
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                """
                UPDATE functions
                   SET spec = $3, phase = $4, message = $5,
                       validation = COALESCE($6, validation),
                       generation = generation + 1, updated_at = now()
                 WHERE namespace = $1 AND name = $2
                RETURNING *
                """,
                namespace,
                name,
                spec.model_dump(mode="json"),
                phase.value,
                message,
                validation,
            )
            if row is None:
                raise NotFound(f"function {name!r} not found")
            await self._notify(conn, namespace, name)
        return _record(row)

    async def get(self, namespace: str, name: str) -> FunctionRecord:
        row = await self.pool.fetchrow(
            "SELECT * FROM functions WHERE namespace = $1 AND name = $2", namespace, name
        )
        if row is None:
            raise NotFound(f"function {name!r} not found")
        return _record(row)

    async def find(self, namespace: str, name: str) -> FunctionRecord | None:
        row = await self.pool.fetchrow(
            "SELECT * FROM functions WHERE namespace = $1 AND name = $2", namespace, name
        )
        return _record(row) if row is not None else None

    async def list_all(self, namespace: str | None = None) -> list[FunctionRecord]:
        if namespace is None:
            rows = await self.pool.fetch("SELECT * FROM functions ORDER BY namespace, name")
        else:
            rows = await self.pool.fetch(
                "SELECT * FROM functions WHERE namespace = $1 ORDER BY name", namespace
            )
        return [_record(r) for r in rows]

    async def set_status(
        self,
        namespace: str,
        name: str,
        *,
        phase: Phase,
        message: str = "",
        generation: int | None = None,
        validation: dict[str, Any] | None = None,
        serving_spec: FunctionSpec | None = None,
    ) -> bool:
        """Record an observed state; with ``generation``, only if the spec did not change
        meanwhile (a stale reconcile must not overwrite a newer one). Returns whether a row
        was updated."""
        sets = ["phase = $3", "message = $4", "updated_at = now()"]
        args: list[Any] = [namespace, name, phase.value, message[:2000]]
        if validation is not None:
            args.append(validation)
            sets.append(f"validation = ${len(args)}")
        if serving_spec is not None:
            args.append(serving_spec.model_dump(mode="json"))
            sets.append(f"serving_spec = ${len(args)}")
            args.append(serving_spec.code.sha256 if serving_spec.code else None)
            sets.append(f"observed_sha256 = ${len(args)}")
        where = "namespace = $1 AND name = $2"
        if generation is not None:
            args.append(generation)
            where += f" AND generation = ${len(args)}"
        async with self.pool.acquire() as conn, conn.transaction():
            result = await conn.execute(
                f"UPDATE functions SET {', '.join(sets)} WHERE {where}",  # noqa: S608 - fixed fragments
                *args,
            )
            changed: bool = result != "UPDATE 0"
            if changed:
                await self._notify(conn, namespace, name)
        return changed

    async def delete(self, namespace: str, name: str) -> FunctionRecord:
        async with self.pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "DELETE FROM functions WHERE namespace = $1 AND name = $2 RETURNING *",
                namespace,
                name,
            )
            if row is None:
                raise NotFound(f"function {name!r} not found")
            await self._notify(conn, namespace, name)
        return _record(row)

    async def delete_namespace(self, namespace: str) -> list[FunctionRecord]:
        async with self.pool.acquire() as conn, conn.transaction():
            rows = await conn.fetch(
                "DELETE FROM functions WHERE namespace = $1 RETURNING *", namespace
            )
            for row in rows:
                await self._notify(conn, namespace, row["name"])
        return [_record(r) for r in rows]

    async def sha256_in_use(self, sha256: str) -> bool:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM functions WHERE spec->'code'->>'sha256' = $1"
            " OR observed_sha256 = $1",
            sha256,
        )
        return bool(value)

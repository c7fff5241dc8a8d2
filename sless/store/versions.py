"""Function versions: one immutable row per upload (or spec change) of a function.

A version is never changed after it is written, except its review ``state`` (held →
allowed or rejected, once). Numbers count up per function from 1; a pruned number is never
given again while the function exists (the next number is one past the highest kept, and
the newest version is never pruned). Rows go with their function (``delete_function``).

Garbage collection: ``prune`` removes the oldest versions beyond a limit, except those
named as ``protected`` (the current one and the traffic targets); the caller then deletes
the blobs and builds of the sha256s that no version and no function refers to any more.
"""

from __future__ import annotations

from typing import Any

import asyncpg

from sless.errors import NotFound
from sless.models import FunctionSpec, FunctionVersion, VersionState, version_number


def _version(row: Any) -> FunctionVersion:
    return FunctionVersion(
        version=f"v{row['number']}",
        sha256=row["sha256"],
        spec=FunctionSpec.model_validate(row["spec"]),
        validation=row["validation"],
        state=VersionState(row["state"]),
        created_by=row["created_by"],
        created_at=row["created_at"],
    )


class VersionRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def next_version(self, namespace: str, name: str) -> str:
        """The name the next version of the function gets (read under the tenant's lock)."""
        number = await self.pool.fetchval(
            "SELECT COALESCE(max(number), 0) + 1 FROM function_versions"
            " WHERE namespace = $1 AND name = $2",
            namespace,
            name,
        )
        return f"v{number}"

    async def create(
        self,
        namespace: str,
        name: str,
        version: str,
        spec: FunctionSpec,
        *,
        validation: dict[str, Any] | None,
        state: VersionState,
        created_by: str,
    ) -> FunctionVersion:
        """Write version ``version`` (from ``next_version``) of ``spec`` (its code set)."""
        if spec.code is None:
            raise ValueError("a version needs code")
        row = await self.pool.fetchrow(
            """
            INSERT INTO function_versions
                   (namespace, name, number, sha256, spec, validation, state, created_by)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            RETURNING *
            """,
            namespace,
            name,
            version_number(version),
            spec.code.sha256,
            spec.runnable().model_dump(mode="json"),
            validation,
            state.value,
            created_by[:200],
        )
        return _version(row)

    async def get(self, namespace: str, name: str, version: str) -> FunctionVersion:
        row = await self.pool.fetchrow(
            "SELECT * FROM function_versions WHERE namespace = $1 AND name = $2 AND number = $3",
            namespace,
            name,
            version_number(version),
        )
        if row is None:
            raise NotFound(f"function {name!r} has no version {version}")
        return _version(row)

    async def find_many(
        self, namespace: str, name: str, versions: list[str]
    ) -> dict[str, FunctionVersion]:
        rows = await self.pool.fetch(
            "SELECT * FROM function_versions"
            " WHERE namespace = $1 AND name = $2 AND number = ANY($3::int[])",
            namespace,
            name,
            [version_number(v) for v in versions],
        )
        found = [_version(row) for row in rows]
        return {v.version: v for v in found}

    async def in_state(self, namespace: str, name: str, state: VersionState) -> list[str]:
        """The names of the function's versions in ``state``, oldest first."""
        rows = await self.pool.fetch(
            "SELECT number FROM function_versions WHERE namespace = $1 AND name = $2"
            " AND state = $3 ORDER BY number",
            namespace,
            name,
            state.value,
        )
        return [f"v{row['number']}" for row in rows]

    async def page(
        self, namespace: str, name: str, *, before: int | None = None, limit: int = 100
    ) -> list[FunctionVersion]:
        """Newest first; ``before``: only numbers below it (a keyset page)."""
        rows = await self.pool.fetch(
            "SELECT * FROM function_versions WHERE namespace = $1 AND name = $2"
            " AND ($3::int IS NULL OR number < $3) ORDER BY number DESC LIMIT $4",
            namespace,
            name,
            before,
            limit,
        )
        return [_version(row) for row in rows]

    async def count(self, namespace: str, name: str) -> int:
        value = await self.pool.fetchval(
            "SELECT count(*) FROM function_versions WHERE namespace = $1 AND name = $2",
            namespace,
            name,
        )
        return int(value)

    async def counts(self, namespace: str) -> dict[str, int]:
        """``{function: versions kept}`` of the namespace (quota usage)."""
        rows = await self.pool.fetch(
            "SELECT name, count(*) AS n FROM function_versions WHERE namespace = $1 GROUP BY name",
            namespace,
        )
        return {r["name"]: int(r["n"]) for r in rows}

    async def set_state(
        self, namespace: str, name: str, sha256: str, *, state: VersionState
    ) -> None:
        """A review decision about ``sha256``: its held versions become ``state``."""
        await self.pool.execute(
            "UPDATE function_versions SET state = $4"
            " WHERE namespace = $1 AND name = $2 AND sha256 = $3 AND state = 'held'",
            namespace,
            name,
            sha256,
            state.value,
        )

    async def prune(
        self, namespace: str, name: str, *, keep: int, protected: list[str]
    ) -> list[str]:
        """Delete the oldest versions beyond the newest ``keep`` (never a ``protected`` one,
        never the newest); returns the sha256s of the deleted rows."""
        rows = await self.pool.fetch(
            """
            DELETE FROM function_versions
             WHERE namespace = $1 AND name = $2 AND number <> ALL($4::int[])
               AND number < (SELECT max(number) FROM function_versions
                              WHERE namespace = $1 AND name = $2)
               AND number NOT IN (SELECT number FROM function_versions
                                   WHERE namespace = $1 AND name = $2
                                   ORDER BY number DESC LIMIT $3)
            RETURNING sha256
            """,
            namespace,
            name,
            max(keep, 1),
            [version_number(v) for v in protected],
        )
        return sorted({row["sha256"] for row in rows})

    async def delete_function(self, namespace: str, name: str) -> list[str]:
        """Remove every version of a deleted function; returns their sha256s."""
        rows = await self.pool.fetch(
            "DELETE FROM function_versions WHERE namespace = $1 AND name = $2 RETURNING sha256",
            namespace,
            name,
        )
        return sorted({row["sha256"] for row in rows})

    async def delete_namespace(self, namespace: str) -> list[str]:
        rows = await self.pool.fetch(
            "DELETE FROM function_versions WHERE namespace = $1 RETURNING sha256", namespace
        )
        return sorted({row["sha256"] for row in rows})

    async def sha256_in_use(self, sha256: str) -> bool:
        value = await self.pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM function_versions WHERE sha256 = $1)", sha256
        )
        return bool(value)

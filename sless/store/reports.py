"""Validation reports, cached by (code sha256, runtime): the same code is checked once.

Reports are stored as the JSON the validation package produces; this layer does not
interpret them beyond the verdict column.
"""

from __future__ import annotations

from typing import Any

import asyncpg


class ReportRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self, sha256: str, runtime: str) -> dict[str, Any] | None:
        row = await self.pool.fetchrow(
            "SELECT report FROM validation_reports WHERE sha256 = $1 AND runtime = $2",
            sha256,
            runtime,
        )
        return dict(row["report"]) if row else None

    async def put(self, sha256: str, runtime: str, verdict: str, report: dict[str, Any]) -> None:
        await self.pool.execute(
            """
            INSERT INTO validation_reports (sha256, runtime, verdict, report)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (sha256, runtime) DO UPDATE
               SET verdict = EXCLUDED.verdict, report = EXCLUDED.report, created_at = now()
            """,
            sha256,
            runtime,
            verdict,
            report,
        )


class LLMReviewRepository:
    """Completed LLM reviews by (code sha256, model, prompt version), as JSON."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def get(self, sha256: str, model: str, prompt_version: str) -> dict[str, Any] | None:
        row = await self.pool.fetchrow(
            "SELECT result FROM llm_reviews"
            " WHERE sha256 = $1 AND model = $2 AND prompt_version = $3",
            sha256,
            model,
            prompt_version,
        )
        return dict(row["result"]) if row else None

    async def put(
        self, sha256: str, model: str, prompt_version: str, result: dict[str, Any]
    ) -> None:
        await self.pool.execute(
            "INSERT INTO llm_reviews (sha256, model, prompt_version, result)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            sha256,
            model,
            prompt_version,
            result,
        )

"""The audit log of management actions: who did what, when, and how it ended.

Rows are written by the gateway (``sless.gateway.audit``) and never changed. A row holds
names and numbers only: the actor, the action, the target, the HTTP status. Never a token,
a header value or a request body; free text (a review's reason) is cut short here, so no
caller can store more than ``MAX_TEXT`` characters in a field.

Reading is newest first in ``id`` order (``id`` is a sequence, so it is stable under equal
timestamps); a page ends at ``before`` (exclusive), the smallest ``id`` of the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

#: the longest any text field of a row may be
MAX_TEXT = 200
MAX_LIMIT = 1000


def _cut(value: str | None) -> str | None:
    return None if value is None else value[:MAX_TEXT]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One management action, as the gateway saw it."""

    actor_kind: str  # "tenant" | "admin" | "anonymous"
    tenant: str | None
    namespace: str | None  # the tenant log it belongs to; None: the provider's view only
    auth_provider: str | None
    auth_subject: str | None
    client: str
    method: str
    action: str
    target_namespace: str | None
    target_name: str | None
    status: int
    outcome: str
    detail: str | None = None


_COLUMNS = (
    "id, at, actor_kind, tenant, namespace, auth_provider, auth_subject, client, method,"
    " action, target_namespace, target_name, status, outcome, detail"
)


def _view(row: Any) -> dict[str, Any]:
    data = dict(row.items())
    data["at"] = data["at"].isoformat()
    return data


class AuditRepository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def record(self, entry: AuditEntry) -> int:
        row_id: int = await self.pool.fetchval(
            "INSERT INTO audit_log (actor_kind, tenant, namespace, auth_provider, auth_subject,"
            " client, method, action, target_namespace, target_name, status, outcome, detail)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
            entry.actor_kind,
            _cut(entry.tenant),
            _cut(entry.namespace),
            _cut(entry.auth_provider),
            _cut(entry.auth_subject),
            _cut(entry.client),
            entry.method[:16],
            _cut(entry.action),
            _cut(entry.target_namespace),
            _cut(entry.target_name),
            entry.status,
            _cut(entry.outcome),
            _cut(entry.detail),
        )
        return row_id

    async def list(
        self,
        *,
        namespace: str | None = None,
        involving: str | None = None,
        tenant: str | None = None,
        action: str | None = None,
        actor_kind: str | None = None,
        subject: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        before: int | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Rows newest first, filtered; ``namespace`` is the log a row belongs to,
        ``involving`` matches it or the target namespace (the provider's filter)."""
        where: list[str] = []
        args: list[Any] = []

        def add(condition: str, value: Any) -> None:
            args.append(value)
            where.append(condition.replace("$?", f"${len(args)}"))

        if namespace is not None:
            add("namespace = $?", namespace)
        if involving is not None:
            add("(namespace = $? OR target_namespace = $?)", involving)
        if tenant is not None:
            add("tenant = $?", tenant)
        if action is not None:
            add("action = $?", action)
        if actor_kind is not None:
            add("actor_kind = $?", actor_kind)
        if subject is not None:
            add("auth_subject = $?", subject)
        if since is not None:
            add("at >= $?", since)
        if until is not None:
            add("at < $?", until)
        if before is not None:
            add("id < $?", before)
        args.append(max(1, min(limit, MAX_LIMIT + 1)))
        sql = f"SELECT {_COLUMNS} FROM audit_log"  # noqa: S608 (only placeholders are added)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY id DESC LIMIT ${len(args)}"
        rows = await self.pool.fetch(sql, *args)
        return [_view(r) for r in rows]

"""Per-tenant mutual exclusion across every gateway process: PostgreSQL advisory locks.

A quota check reads what a tenant owns and then writes; two requests (in one process or
in two gateway replicas) must not both see room for one more. ``TenantLock.hold`` takes a
transaction-level advisory lock keyed by the namespace on a connection of its own and
keeps it until the block ends, so checks and writes of one tenant run one at a time while
other tenants are not blocked. The lock is released by PostgreSQL when the transaction
ends, including when the gateway dies mid-way: no lock is ever left behind.

Keys are ``(class, hashtext(namespace))``: the two-integer form is a key space of its own
(the migrations' single-bigint lock cannot collide), and a hash collision between two
namespaces only makes them wait for each other.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import asyncpg

#: first key of the two-integer advisory lock: "sless tenant quota"
_TENANT_LOCK_CLASS = 0x51E5
#: the same for a tenant's queue of asynchronous calls: enqueueing does not wait on the
#: tenant's other writes, only on its other enqueues
QUEUE_LOCK_CLASS = 0x51E6


async def lock_in_transaction(conn: asyncpg.Connection, lock_class: int, namespace: str) -> None:
    """Take ``namespace``'s lock of ``lock_class`` until ``conn``'s transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", lock_class, namespace)


class TenantLock:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @contextlib.asynccontextmanager
    async def hold(self, namespace: str) -> AsyncIterator[None]:
        """Hold ``namespace``'s lock for the block (waits while another holder has it)."""
        async with self.pool.acquire() as conn, conn.transaction():
            await lock_in_transaction(conn, _TENANT_LOCK_CLASS, namespace)
            yield

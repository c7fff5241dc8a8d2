import asyncio
import os
from decimal import Decimal

import asyncpg

_pool = None


class InsufficientFunds(Exception):
    pass


async def pool():
    global _pool
    if _pool is None:
        _pool = await asyncpg.create_pool(os.environ["DATABASE_URL"], min_size=1, max_size=4)
    return _pool


async def transfer(src: int, dst: int, amount: Decimal) -> dict:
    async with (await pool()).acquire() as conn:
        async with conn.transaction(isolation="repeatable_read"):
            # lock both rows in a fixed order so two opposite transfers cannot deadlock
            rows = await conn.fetch(
                "SELECT id, balance FROM accounts WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE",
                [src, dst],
            )
            balances = {r["id"]: r["balance"] for r in rows}
            if len(balances) != 2:
                raise LookupError("unknown account")
            if balances[src] < amount:
                raise InsufficientFunds(src)
            await conn.execute("UPDATE accounts SET balance = balance - $1 WHERE id = $2", amount, src)
            await conn.execute("UPDATE accounts SET balance = balance + $1 WHERE id = $2", amount, dst)
            ledger_id = await conn.fetchval(
                "INSERT INTO ledger (src, dst, amount) VALUES ($1, $2, $3) RETURNING id", src, dst, amount
            )
    return {"ledger_id": ledger_id}


def handle(event, context=None):
    try:
        return asyncio.run(transfer(int(event["from"]), int(event["to"]), Decimal(str(event["amount"]))))
    except InsufficientFunds:
        return {"error": "insufficient funds"}
    except LookupError:
        return {"error": "unknown account"}

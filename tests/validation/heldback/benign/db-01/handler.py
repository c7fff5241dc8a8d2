import os, asyncio
import asyncpg

async def _get(user_id):
    conn = await asyncpg.connect(os.environ["DATABASE_URL"])
    try:
        return await conn.fetchrow("SELECT id, name, email FROM users WHERE id = $1", user_id)
    finally:
        await conn.close()

def handle(event, context):
    row = asyncio.run(_get(int(event["query"]["id"])))
    return dict(row) if row else {"statusCode": 404}

import os

import psycopg

DSN = os.environ["DATABASE_URL"]


def handle(event, context=None):
    limit = min(int(event.get("limit", 20)), 100)
    with psycopg.connect(DSN) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, total, created_at FROM orders ORDER BY created_at DESC LIMIT %s", (limit,))
        rows = cur.fetchall()
    return {"orders": [{"id": r[0], "total": r[1], "created_at": r[2].isoformat()} for r in rows]}

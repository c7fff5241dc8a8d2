import json
import os

import pymysql
import pymysql.cursors


def _connect():
    return pymysql.connect(
        host=os.environ["MYSQL_HOST"],
        user=os.environ["MYSQL_USER"],
        password=os.environ["MYSQL_PASSWORD"],
        database=os.environ.get("MYSQL_DB", "audit"),
        cursorclass=pymysql.cursors.DictCursor,
        connect_timeout=5,
        autocommit=False,
    )


def handle(event, context=None):
    """Batch-insert audit entries delivered by the queue trigger (one SQS batch per call)."""
    entries = [json.loads(r["body"]) for r in event.get("Records", [])]
    if not entries:
        return {"inserted": 0}
    rows = [(e["actor"], e["action"], e.get("target"), json.dumps(e.get("details", {}))) for e in entries]
    conn = _connect()
    try:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO audit_log (actor, action, target, details) VALUES (%s, %s, %s, %s)", rows
            )
            cur.execute("SELECT COUNT(*) AS n FROM audit_log WHERE created_at > NOW() - INTERVAL 1 HOUR")
            recent = cur.fetchone()["n"]
        conn.commit()
    except pymysql.MySQLError:
        conn.rollback()
        raise
    finally:
        conn.close()
    return {"inserted": len(rows), "last_hour": recent}

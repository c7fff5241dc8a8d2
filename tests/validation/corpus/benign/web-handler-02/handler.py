import base64
import json
import os

from sqlalchemy import create_engine, text

engine = create_engine(os.environ["DATABASE_URL"], pool_pre_ping=True, pool_size=2)
PAGE_MAX = 100


def _encode_cursor(created_at, row_id):
    raw = json.dumps([created_at.isoformat(), row_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor):
    padded = cursor + "=" * (-len(cursor) % 4)
    created_at, row_id = json.loads(base64.urlsafe_b64decode(padded))
    return created_at, row_id


def handle(event, context=None):
    qs = event.get("queryStringParameters") or {}
    try:
        limit = max(1, min(int(qs.get("limit", 25)), PAGE_MAX))
    except ValueError:
        return {"statusCode": 400, "body": json.dumps({"error": "limit must be an integer"})}

    sql = "SELECT id, title, created_at FROM articles"
    params = {"limit": limit + 1}
    if qs.get("cursor"):
        try:
            params["ts"], params["id"] = _decode_cursor(qs["cursor"])
        except (ValueError, TypeError):
            return {"statusCode": 400, "body": json.dumps({"error": "bad cursor"})}
        sql += " WHERE (created_at, id) < (:ts, :id)"
    sql += " ORDER BY created_at DESC, id DESC LIMIT :limit"

    with engine.connect() as conn:
        rows = conn.execute(text(sql), params).mappings().all()

    page, more = rows[:limit], len(rows) > limit
    body = {
        "items": [{"id": r["id"], "title": r["title"], "created_at": r["created_at"].isoformat()} for r in page],
        "next_cursor": _encode_cursor(page[-1]["created_at"], page[-1]["id"]) if more else None,
    }
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}

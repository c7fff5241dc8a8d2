"""/healthz and /readyz for the orders service; readiness pings its dependencies."""
import os
import time

import psycopg
import redis

DATABASE_URL = os.environ["DATABASE_URL"]
cache = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379/0"), socket_timeout=1)


def _timed(check):
    started = time.perf_counter()
    try:
        check()
        return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 1)}
    except Exception as exc:  # report any failure as not ready
        return {"ok": False, "error": type(exc).__name__}


def _postgres():
    with psycopg.connect(DATABASE_URL, connect_timeout=2) as conn:
        conn.execute("SELECT 1")


def handle(event, context=None):
    if event.get("path") == "/healthz":
        return {"statusCode": 200, "body": "ok"}
    checks = {"postgres": _timed(_postgres), "redis": _timed(cache.ping)}
    ready = all(c["ok"] for c in checks.values())
    return {"statusCode": 200 if ready else 503, "body": {"ready": ready, "checks": checks}}

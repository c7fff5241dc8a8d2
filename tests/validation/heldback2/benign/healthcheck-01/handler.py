"""Checks that our database and cache resolve and accept TCP connections."""

import socket
import time

TARGETS = {"postgres": ("db.internal.example.com", 5432), "redis": ("cache.internal.example.com", 6379)}


def _check(host, port):
    started = time.monotonic()
    try:
        addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4]
        with socket.create_connection(addr[:2], timeout=2):
            pass
        return {"ok": True, "ms": round((time.monotonic() - started) * 1000, 1)}
    except OSError as exc:
        return {"ok": False, "error": exc.__class__.__name__}


def handle(event, context):
    results = {name: _check(*target) for name, target in TARGETS.items()}
    status = 200 if all(r["ok"] for r in results.values()) else 503
    return {"statusCode": status, "body": results}

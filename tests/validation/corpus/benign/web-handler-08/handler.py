import datetime
import os
import platform

VERSION = os.environ.get("APP_VERSION", "0.0.0")


def handle(event, context=None):
    path = event.get("path", "/echo")
    if path == "/health":
        return {"status": "ok"}
    if path == "/version":
        return {"version": VERSION, "python": platform.python_version()}
    if path == "/echo":
        return {"echo": event.get("body"), "headers": event.get("headers", {})}
    if path == "/time":
        return {"now": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    return {"statusCode": 404}

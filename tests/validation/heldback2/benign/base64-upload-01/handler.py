"""Stores an uploaded file (base64 in JSON) in /tmp and returns its digest."""

import base64
import binascii
import hashlib
import os

STORE = "/tmp/uploads"


def handle(event, context):
    body = event["body"] if isinstance(event["body"], dict) else {}
    try:
        data = base64.b64decode(body.get("content", ""), validate=True)
    except binascii.Error:
        return {"statusCode": 400, "body": {"error": "content is not base64"}}
    digest = hashlib.sha256(data).hexdigest()
    os.makedirs(STORE, exist_ok=True)
    with open(os.path.join(STORE, digest), "wb") as fh:
        fh.write(data)
    return {"sha256": digest, "size": len(data), "stored": len(os.listdir(STORE))}

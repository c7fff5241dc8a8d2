import hashlib
import base64

EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def handle(event, context=None):
    data = base64.b64decode(event.get("file", ""))
    digest = hashlib.sha256(data).hexdigest()
    return {"sha256": digest, "md5": hashlib.md5(data, usedforsecurity=False).hexdigest(), "empty": digest == EMPTY_SHA256}

"""Inspects a gzip/zlib blob sent base64-encoded: sizes, ratio, first line."""

import base64
import gzip
import zlib

LIMIT = 8 * 2**20


def handle(event, context):
    body = event["body"] if isinstance(event["body"], dict) else {}
    raw = base64.b64decode(body.get("data", ""))
    if raw[:2] == b"\x1f\x8b":
        kind, text = "gzip", gzip.decompress(raw)
    else:
        d = zlib.decompressobj()
        kind, text = "zlib", d.decompress(raw, LIMIT)
    first = text.split(b"\n", 1)[0][:200].decode("utf-8", "replace")
    return {"kind": kind, "compressed": len(raw), "size": len(text),
            "ratio": round(len(text) / max(1, len(raw)), 2), "first_line": first}

"""Bundles the posted files into a .tar.gz and returns it base64-encoded."""

import base64
import os
import subprocess
import tempfile


def handle(event, context):
    files = event["body"] if isinstance(event["body"], dict) else {}
    with tempfile.TemporaryDirectory(dir="/tmp") as work:
        names = []
        for name, text in files.items():
            safe = os.path.basename(name) or "file.txt"
            with open(os.path.join(work, safe), "w") as fh:
                fh.write(str(text))
            names.append(safe)
        out = os.path.join(work, "bundle.tar.gz")
        proc = subprocess.run(["tar", "-czf", out, "-C", work, *names], capture_output=True, text=True, timeout=10)
        if proc.returncode != 0:
            return {"statusCode": 500, "body": {"error": proc.stderr.strip()}}
        with open(out, "rb") as fh:
            data = fh.read()
    return {"files": names, "size": len(data), "archive": base64.b64encode(data).decode()}

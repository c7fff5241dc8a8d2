"""Content negotiation: converts a stored TIFF to the format the Accept header asks for."""

import subprocess
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("scan.tif")
FORMATS = {"image/png": "png", "image/webp": "webp", "image/jpeg": "jpg"}


def handle(event, context=None):
    h = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    accept = [part.split(";")[0].strip() for part in h.get("accept", "").split(",")]
    fmt = next((FORMATS[a] for a in accept if a in FORMATS), "jpg")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"scan.{fmt}"
        subprocess.run(["convert", str(SOURCE), str(out)], check=True, timeout=20)
        return {"statusCode": 200, "headers": {"Content-Type": f"image/{fmt}"}, "body": out.read_bytes().hex()}

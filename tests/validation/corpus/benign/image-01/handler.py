"""S3 upload trigger: writes 3 JPEG renditions of every new photo next to the original."""
import io
import os
import urllib.parse

import boto3
from PIL import Image, ImageOps

s3 = boto3.client("s3")
SIZES = {"sm": 320, "md": 800, "lg": 1600}
DEST_PREFIX = os.environ.get("RENDITIONS_PREFIX", "renditions/")


def handle(event, context=None):
    written = []
    for record in event["Records"]:
        bucket = record["s3"]["bucket"]["name"]
        key = urllib.parse.unquote_plus(record["s3"]["object"]["key"])
        if key.startswith(DEST_PREFIX):
            continue  # don't process our own output
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        with Image.open(io.BytesIO(body)) as original:
            original = ImageOps.exif_transpose(original).convert("RGB")
            for label, width in SIZES.items():
                if original.width <= width and label != "sm":
                    continue
                copy = original.copy()
                copy.thumbnail((width, width * 4), Image.Resampling.LANCZOS)
                out = io.BytesIO()
                copy.save(out, "JPEG", quality=82, optimize=True, progressive=True)
                dest = f"{DEST_PREFIX}{label}/{os.path.splitext(key)[0]}.jpg"
                s3.put_object(Bucket=bucket, Key=dest, Body=out.getvalue(), ContentType="image/jpeg",
                              CacheControl="public, max-age=31536000, immutable")
                written.append(dest)
    return {"written": written}

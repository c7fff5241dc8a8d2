import os
import subprocess
import tempfile

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    bucket, key = event["bucket"], event["key"]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in" + os.path.splitext(key)[1])
        dst = os.path.join(tmp, "out.webp")
        s3.download_file(bucket, key, src)
        proc = subprocess.run(["convert", src, "-resize", "1024x1024>", "-quality", "80", dst],
                              capture_output=True, text=True, timeout=30)
        if proc.returncode != 0:
            return {"error": proc.stderr[-500:]}
        s3.upload_file(dst, bucket, key.rsplit(".", 1)[0] + ".webp")
    return {"converted": key}

import json
import os
import subprocess

import boto3

s3 = boto3.client("s3")
FFMPEG = os.environ.get("FFMPEG_PATH", "/opt/bin/ffmpeg")
FFPROBE = os.environ.get("FFPROBE_PATH", "/opt/bin/ffprobe")


def probe_duration(url: str) -> float:
    out = subprocess.run(
        [FFPROBE, "-v", "error", "-show_entries", "format=duration", "-of", "json", url],
        capture_output=True, text=True, check=True, timeout=30,
    ).stdout
    return float(json.loads(out)["format"]["duration"])


def handle(event, context=None):
    """Video poster frame: ffmpeg reads the clip straight from a presigned URL (no /tmp copy
    of multi-GB files) and writes the frame at 10% to stdout, which goes back to S3."""
    bucket, key = event["bucket"], event["key"]
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=600)
    try:
        at = probe_duration(url) * 0.1
        frame = subprocess.run(
            [FFMPEG, "-hide_banner", "-loglevel", "error", "-ss", f"{at:.2f}", "-i", url,
             "-frames:v", "1", "-vf", "scale=1280:-2", "-q:v", "3", "-f", "image2pipe", "-vcodec", "mjpeg", "-"],
            check=True, capture_output=True, timeout=120,
        ).stdout
    except subprocess.CalledProcessError as exc:
        return {"ok": False, "stderr": (exc.stderr or b"").decode(errors="replace")[-2000:]}
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": "ffmpeg timed out"}
    dest = key.rsplit(".", 1)[0] + "/poster.jpg"
    s3.put_object(Bucket=bucket, Key=dest, Body=frame, ContentType="image/jpeg")
    return {"ok": True, "poster": dest, "at_seconds": round(at, 2)}

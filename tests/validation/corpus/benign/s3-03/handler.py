"""Gives the browser a short-lived presigned POST so it uploads straight to S3."""
import json
import os
import re
import uuid

import boto3
from botocore.config import Config

BUCKET = os.environ["UPLOAD_BUCKET"]
MAX_BYTES = 25 * 1024 * 1024
ALLOWED_TYPES = {"image/jpeg", "image/png", "image/webp", "application/pdf"}
s3 = boto3.client("s3", config=Config(signature_version="s3v4", region_name=os.environ.get("AWS_REGION", "eu-west-1")))


def handle(event, context=None):
    user = event["requestContext"]["authorizer"]["claims"]["sub"]
    body = json.loads(event.get("body") or "{}")
    content_type = body.get("contentType", "")
    if content_type not in ALLOWED_TYPES:
        return {"statusCode": 415, "body": json.dumps({"error": f"{content_type!r} not allowed"})}
    safe_name = re.sub(r"[^A-Za-z0-9._-]", "_", body.get("filename", "upload"))[:100]
    key = f"incoming/{user}/{uuid.uuid4()}/{safe_name}"
    post = s3.generate_presigned_post(
        Bucket=BUCKET,
        Key=key,
        Fields={"Content-Type": content_type},
        Conditions=[{"Content-Type": content_type}, ["content-length-range", 1, MAX_BYTES]],
        ExpiresIn=300,
    )
    return {"statusCode": 200, "body": json.dumps({"key": key, "url": post["url"], "fields": post["fields"]})}

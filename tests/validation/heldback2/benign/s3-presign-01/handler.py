"""Presigned S3 GET URLs (SigV4, query-string auth), computed locally."""

import datetime
import hashlib
import hmac
import os
import urllib.parse

BUCKET, REGION = os.environ.get("BUCKET", "reports-example"), os.environ.get("AWS_REGION", "eu-west-1")


def _sign(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def presign(key_name: str, expires: int = 300) -> str:
    access, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    host = f"{BUCKET}.s3.{REGION}.amazonaws.com"
    scope = f"{day}/{REGION}/s3/aws4_request"
    query = urllib.parse.urlencode(sorted({
        "X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{access}/{scope}",
        "X-Amz-Date": amz_date, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host",
    }.items()), quote_via=urllib.parse.quote)
    path = "/" + urllib.parse.quote(key_name)
    canonical = f"GET\n{path}\n{query}\nhost:{host}\n\nhost\nUNSIGNED-PAYLOAD"
    to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    key = _sign(_sign(_sign(_sign(f"AWS4{secret}".encode(), day), REGION), "s3"), "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return f"https://{host}{path}?{query}&X-Amz-Signature={signature}"


def handle(event, context):
    name = event["query"].get("key", "report.pdf")
    if "AWS_SECRET_ACCESS_KEY" not in os.environ:
        return {"statusCode": 500, "body": {"error": "AWS credentials are not configured"}}
    return {"url": presign(name)}

import os
import urllib.parse

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    out = []
    for rec in event["Records"]:
        bucket = rec["s3"]["bucket"]["name"]
        key = urllib.parse.unquote_plus(rec["s3"]["object"]["key"])
        head = s3.head_object(Bucket=bucket, Key=key)
        out.append({"key": key, "size": head["ContentLength"], "type": head.get("ContentType")})
    url = s3.generate_presigned_url("get_object", Params={"Bucket": os.environ["BUCKET"], "Key": "report.csv"}, ExpiresIn=300)
    return {"objects": out, "report": url}

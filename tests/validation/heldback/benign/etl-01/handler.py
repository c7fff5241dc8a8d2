import csv, io, json
import boto3

s3 = boto3.client("s3")

def handle(event, context):
    bucket, key = event["body"]["bucket"], event["body"]["key"]
    obj = s3.get_object(Bucket=bucket, Key=key)
    rows = list(csv.DictReader(io.StringIO(obj["Body"].read().decode("utf-8"))))
    cleaned = [{k.strip().lower(): v.strip() for k, v in r.items()} for r in rows if any(r.values())]
    s3.put_object(Bucket=bucket, Key=key.replace(".csv", ".json"), Body=json.dumps(cleaned).encode())
    return {"rows": len(cleaned)}

import gzip
import base64
import json


def handle(event, context=None):
    # CloudWatch Logs subscription payloads are gzipped and base64-encoded
    data = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    errors = [e["message"] for e in data["logEvents"] if "ERROR" in e["message"]]
    return {"group": data["logGroup"], "errors": errors[:50]}
